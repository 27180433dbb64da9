"""tests/test_policy_names.py: KernelPolicy checks the names it is given: a typo raises with
the nearest names, other spellings of a kernel are accepted, a pin applies on the device
types that have its kernel (explain says where it did not), and pins can be scoped to a
device type."""

import json

import pytest

import xpuruntime as xrt


def decisions_for(log, op):
    return [d for d in log.records if d.op == op]


@pytest.mark.parametrize("pins, phrase", [
    ({"matmull": "openblas"}, "there is no op 'matmull'; did you mean 'matmul'"),
    ({"matmul": "openbals"}, "has no kernel 'openbals'; did you mean 'openblas'"),
    ({"sum": "nativ"}, "did you mean 'native'"),
    ({"gpu:matmul": "openblas"}, "scoped to a device type"),
])
def test_a_name_that_exists_nowhere_is_a_value_error_with_a_suggestion(pins, phrase):
    with pytest.raises(ValueError, match=phrase.replace("(", r"\(")):
        xrt.KernelPolicy(**pins)


@pytest.mark.parametrize("spelling", ["cublasLt", "cuBLASLt", "cublas_lt", "CUBLASLT"])
def test_other_spellings_of_a_kernel_are_accepted(spelling):
    policy = xrt.KernelPolicy(matmul=spelling)
    assert policy.preferences == {"matmul": "cublaslt"}


def test_a_gpu_pin_leaves_cpu_matmuls_to_the_strategy_and_explain_says_so():
    a = xrt.ones((4, 4))
    with xrt.kernel_policy(xrt.KernelPolicy(matmul="cublasLt")):
        with xrt.explain() as log:
            result = a @ a
    assert result.tolist() == [[4.0] * 4] * 4
    (decision,) = decisions_for(log, "matmul")[-1:]
    assert decision.kernel in ("openblas", "native")
    assert "does not apply on cpu" in decision.reason
    assert "matmul='cublaslt'" in decision.reason


def test_a_pin_scoped_to_the_cpu_holds_there():
    a = xrt.ones((4, 4))
    policy = xrt.KernelPolicy(cpu={"matmul": "native"}, cuda={"matmul": "cublaslt"})
    assert policy.preferences == {"cpu:matmul": "native", "cuda:matmul": "cublaslt"}
    with xrt.kernel_policy(policy):
        with xrt.explain() as log:
            a @ a
    decision = decisions_for(log, "matmul")[-1]
    assert decision.kernel == "native" and decision.kind == "pinned"
    assert "cpu:matmul='native'" in decision.reason


def test_a_scoped_pin_wins_over_an_unscoped_one():
    a = xrt.ones((4, 4))
    policy = xrt.KernelPolicy(matmul="openblas").set("matmul", "native", device="cpu")
    with xrt.kernel_policy(policy):
        with xrt.explain() as log:
            a @ a
    assert decisions_for(log, "matmul")[-1].kernel == "native"


def test_a_scoped_pin_to_a_kernel_the_device_lacks_fails_when_the_op_runs():
    policy = xrt.KernelPolicy(cpu={"matmul": "cublaslt"})
    with xrt.kernel_policy(policy):
        with pytest.raises(xrt.UnsupportedOperationError, match="cublaslt"):
            xrt.ones((2, 2)) @ xrt.ones((2, 2))


def test_scoped_pins_round_trip_through_json():
    policy = xrt.KernelPolicy(cuda={"matmul": "cublasLt"}, sum="native")
    again = xrt.KernelPolicy.from_json(policy.to_json())
    assert again == policy
    assert json.loads(policy.to_json())["preferences"] == {"cuda:matmul": "cublaslt",
                                                          "sum": "native"}


def test_json_with_a_typo_names_it():
    text = json.dumps({"schema": "xpuruntime.KernelPolicy/1", "preferences": {"sort": "radx"}})
    with pytest.raises(ValueError, match="did you mean 'radix'"):
        xrt.KernelPolicy.from_json(text)
