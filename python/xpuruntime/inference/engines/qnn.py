"""python/xpuruntime/inference/engines/qnn.py: Qualcomm NPUs through ONNX Runtime's QNN
execution provider (the ``onnxruntime-qnn`` package) and its HTP backend.

Untested on this project's machines: onnxruntime-qnn has wheels for Windows on Arm only, and
no machine here has a Qualcomm NPU. The engine is ONNX Runtime's (same IO binding, same
explain) with the QNN provider and its documented options: ``backend_type="htp"``,
``htp_performance_mode`` from the policy's performance hint, ``enable_htp_fp16_precision``
for float models, and QNN's own profiling when the policy asks for a profile. Inputs and
outputs live in host memory; the provider moves them to the NPU.
"""

from .._engine import register_engine
from .onnxruntime import OnnxRuntimeEngine, _has_ort


@register_engine
class QnnEngine(OnnxRuntimeEngine):
    """ONNX Runtime's QNN execution provider on a Qualcomm HTP (``device="npu"``)."""

    name = "qnn"
    extra = "qnn"
    kinds = ("npu",)
    tested_here = False
    auto_rank = {"npu": 1}
    provider = {"npu": "QNNExecutionProvider"}
    precision_by_provider = True

    @classmethod
    def probe(cls, target):
        if not _has_ort():
            return "onnxruntime is not installed (pip install xpuruntime[qnn])"
        import onnxruntime as ort
        if "QNNExecutionProvider" not in ort.get_available_providers():
            return ("this onnxruntime build has no QNNExecutionProvider (install "
                    "onnxruntime-qnn: pip install xpuruntime[qnn]; Windows on Arm only)")
        return None

    def _providers(self):
        policy = self.exec_policy
        options = {
            "backend_type": "htp",
            "device_id": str(self.target.index),
            "htp_performance_mode": ("burst" if policy.performance_hint == "latency"
                                     else "sustained_high_performance"),
            "htp_graph_finalization_optimization_mode": "3",
        }
        if policy.precision in ("fp32", "fp16"):
            # The HTP computes float models in fp16; fp32 is not one of its precisions.
            options["enable_htp_fp16_precision"] = "1"
            if policy.precision == "fp32":
                self.unhonoured.append("precision='fp32': the HTP computes float models in "
                                       "fp16 (enable_htp_fp16_precision)")
        elif policy.precision == "bf16":
            options["enable_htp_fp16_precision"] = "1"
            self.unhonoured.append("precision='bf16': the HTP has no bfloat16; it computes "
                                   "in fp16")
        else:
            self.notes.append("precision='int8': the HTP runs the model's own QDQ "
                              "quantization (quantize it beforehand with ONNX Runtime's "
                              "QNN quantization tools)")
        if policy.profile:
            options["profiling_level"] = "detailed"
        if policy.cuda_graphs:
            self.unhonoured.append("cuda_graphs: the QNN provider does not run on CUDA")
        return [("QNNExecutionProvider", options), "CPUExecutionProvider"]
