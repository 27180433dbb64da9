// cpp/bindings/bind_cuda_collectives.cpp: `_core._cuda`'s NCCL communicator, collectives and
// groups (xpuruntime/cuda/collectives.h). xpuruntime.distributed builds on these.
#include <nanobind/stl/string.h>

#include <cstring>

#include "bindings.h"
#include "xpuruntime/cuda/collectives.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/event.h"
#include "xpuruntime/runtime/stream.h"

namespace xrt::py {
namespace {

using cuda::Collective;
using cuda::Communicator;
using cuda::ReduceOp;
using Release = nb::call_guard<nb::gil_scoped_release>;

cuda::UniqueId unique_id_arg(nb::bytes id) {
  if (id.size() != cuda::kUniqueIdBytes)
    throw ValueError("an NCCL unique id is " + std::to_string(cuda::kUniqueIdBytes) +
                     " bytes, got " + std::to_string(id.size()));
  cuda::UniqueId out;
  std::memcpy(out.data(), id.c_str(), cuda::kUniqueIdBytes);
  return out;
}

Collective collective_arg(const std::string& name) {
  static const std::pair<const char*, Collective> names[] = {
      {"all_reduce", Collective::AllReduce}, {"broadcast", Collective::Broadcast},
      {"reduce", Collective::Reduce}, {"all_gather", Collective::AllGather},
      {"reduce_scatter", Collective::ReduceScatter}, {"all_to_all", Collective::AllToAll},
      {"send", Collective::Send}, {"recv", Collective::Recv}};
  for (const auto& [n, c] : names)
    if (name == n) return c;
  throw ValueError("unknown collective '" + name + "'");
}

}  // namespace

void bind_cuda_collectives(nb::module_& m) {
  nb::enum_<ReduceOp>(m, "ReduceOp", "How a reducing collective combines the ranks' values.")
      .value("SUM", ReduceOp::Sum)
      .value("PROD", ReduceOp::Prod)
      .value("MIN", ReduceOp::Min)
      .value("MAX", ReduceOp::Max)
      .value("AVG", ReduceOp::Avg);

  m.def("nccl_version", &cuda::nccl_version,
        "NCCL's version (e.g. 22803); CudaError saying how to install NCCL when it is missing.");
  m.def("nccl_unique_id", [] {
    cuda::UniqueId id = cuda::nccl_unique_id();
    return nb::bytes(reinterpret_cast<const char*>(id.data()), id.size());
  }, "A fresh 128-byte NCCL unique id (made by one rank, sent to the others).");
  m.def("nccl_group_start", &cuda::group_start, "ncclGroupStart for the calling thread.");
  m.def("nccl_group_end", &cuda::group_end, Release(),
        "ncclGroupEnd: launches the collectives queued since the outermost group_start.");
  m.def("_check_collective", [](const std::string& kind, const Tensor& input,
                                const Tensor& output, ReduceOp op, int world_size, int device,
                                int peer) {
    cuda::check_collective(collective_arg(kind), input, output, op, world_size, device, peer);
  }, nb::arg("kind"), nb::arg("input"), nb::arg("output"), nb::arg("op"),
     nb::arg("world_size"), nb::arg("device"), nb::arg("peer"),
     "The checks a collective makes before it queues anything (needs no GPU); a test hook.");

  nb::class_<Communicator>(m, "NcclCommunicator", "One rank of an NCCL communicator.")
      .def("__init__", [](Communicator* self, nb::bytes id, int world_size, int rank,
                          int device, double timeout) {
        cuda::UniqueId uid = unique_id_arg(id);
        nb::gil_scoped_release release;  // waits for the other ranks
        new (self) Communicator(uid, world_size, rank, device, timeout);
      }, nb::arg("unique_id"), nb::arg("world_size"), nb::arg("rank"), nb::arg("device"),
         nb::arg("timeout"),
         "Joins the communicator as rank of world_size on device (blocks until all joined; "
         "timeout in seconds, <= 0 for none).")
      .def_prop_ro("rank", &Communicator::rank)
      .def_prop_ro("world_size", &Communicator::world_size)
      .def_prop_ro("device", &Communicator::device)
      .def_prop_ro("timeout", &Communicator::timeout_seconds)
      .def("error", &Communicator::error, Release(), "Why it failed ('' while it works).")
      .def("check", &Communicator::check, Release(), "CudaError when it failed or is closed.")
      .def("abort", &Communicator::abort, Release())
      .def("destroy", &Communicator::destroy, Release())
      .def("all_reduce", &Communicator::all_reduce, Release(), nb::arg("input"),
           nb::arg("output"), nb::arg("op"), nb::arg("stream"))
      .def("broadcast", &Communicator::broadcast, Release(), nb::arg("input"),
           nb::arg("output"), nb::arg("root"), nb::arg("stream"))
      .def("reduce", &Communicator::reduce, Release(), nb::arg("input"), nb::arg("output"),
           nb::arg("op"), nb::arg("root"), nb::arg("stream"))
      .def("all_gather", &Communicator::all_gather, Release(), nb::arg("input"),
           nb::arg("output"), nb::arg("stream"))
      .def("reduce_scatter", &Communicator::reduce_scatter, Release(), nb::arg("input"),
           nb::arg("output"), nb::arg("op"), nb::arg("stream"))
      .def("all_to_all", &Communicator::all_to_all, Release(), nb::arg("input"),
           nb::arg("output"), nb::arg("stream"))
      .def("send", &Communicator::send, Release(), nb::arg("tensor"), nb::arg("peer"),
           nb::arg("stream"))
      .def("recv", &Communicator::recv, Release(), nb::arg("tensor"), nb::arg("peer"),
           nb::arg("stream"))
      .def("wait_event", &Communicator::wait_event, Release(), nb::arg("event"),
           "Waits on the host for event; raises as soon as the communicator fails.");
}

}  // namespace xrt::py
