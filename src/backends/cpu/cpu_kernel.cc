#include "backends/cpu/cpu_kernel.h"

#include <algorithm>

#include "backends/kernel_registry.h"
#include "taso/ir/status_macros.h"

namespace taso::cpu {
namespace {

KernelRegistry<Kernel>& Registry() {
  static auto* r = new KernelRegistry<Kernel>("cpu kernel");
  return *r;
}

KernelRegistry<View>& Views() {
  static auto* r = new KernelRegistry<View>("cpu view");
  return *r;
}

}  // namespace

void RegisterView(const std::string& op, std::unique_ptr<View> view) { Views().Register(op, std::move(view)); }

const View* FindView(absl::string_view op) { return Views().Find(op); }

bool PointViewOutputs(const Graph& graph, const Node& node, std::vector<float*>& data) {
  const View* view = FindView(node.op->name());
  if (!view || node.inputs.empty() || node.inputs[0] == kNoValue || !data[node.inputs[0]]) return false;
  auto offsets = view->Offsets(node.params, graph.InputInfos(node), graph.OutputTypes(node));
  if (!offsets) return false;
  for (size_t k = 0; k < node.outputs.size(); ++k) data[node.outputs[k]] = data[node.inputs[0]] + (*offsets)[k];
  return true;
}

dnnl::engine& Engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::stream& Stream() {
  static dnnl::stream* s = new dnnl::stream(Engine());
  return *s;
}

void RegisterKernel(const std::string& op, std::unique_ptr<Kernel> kernel) {
  Registry().Register(op, std::move(kernel));
}

const Kernel* FindKernel(absl::string_view op) { return Registry().Find(op); }

absl::Status ValidateKernels() {
  RETURN_IF_ERROR(Registry().Validate(OpRegistry::Global()));
  return Views().Validate(OpRegistry::Global());
}

dnnl::memory PrimitiveRun::Buffer(const dnnl::memory::desc& md) {
  dnnl::memory m(md, Engine());
  float* p = static_cast<float*>(m.get_data_handle());
  const size_t n = md.get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = 0.25f + 0.001f * static_cast<float>(i % 97);
  return m;
}

void PrimitiveRun::Add(dnnl::primitive p, std::unordered_map<int, dnnl::memory> args) {
  steps_.push_back({std::move(p), std::move(args)});
  for (Step& s : pending_outputs_) steps_.push_back(std::move(s));
  pending_outputs_.clear();
}

PrimitiveRun::Step PrimitiveRun::Reorder(const dnnl::memory& from, const dnnl::memory& to) {
  return {dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
}

dnnl::memory PrimitiveRun::Input(size_t i, const dnnl::memory::desc& port_desc, const dnnl::memory::desc& wanted,
                                 bool constant) {
  dnnl::memory port = Buffer(port_desc);
  AddInputPort(i, port);
  if (wanted == port.get_desc()) return port;
  dnnl::memory m = Buffer(wanted);
  (constant ? setup_ : steps_).push_back(Reorder(port, m));
  return m;
}

dnnl::memory PrimitiveRun::Output(size_t i, const dnnl::memory::desc& port_desc, const dnnl::memory::desc& produced) {
  dnnl::memory port = Buffer(port_desc);
  AddOutputPort(i, port);
  if (produced == port.get_desc()) return port;
  dnnl::memory m = Buffer(produced);
  pending_outputs_.push_back(Reorder(m, port));
  return m;
}

void PrimitiveRun::Setup() {
  for (Step& s : setup_) s.primitive.execute(Stream(), s.args);
  Stream().wait();
}

std::vector<std::string> PrimitiveRun::Implementations() const {
  std::vector<std::string> names;
  for (const Step& s : steps_) {
    const char* name = nullptr;
    dnnl_primitive_desc_query(s.primitive.get_primitive_desc(), dnnl_query_impl_info_str, 0, &name);
    names.push_back(name ? name : "?");
  }
  return names;
}

void PrimitiveRun::Run() {
  for (Step& s : steps_) s.primitive.execute(Stream(), s.args);
  Stream().wait();
}

dnnl::memory::dims Dims(const Shape& s) {
  if (s.empty()) return {1};
  return dnnl::memory::dims(s.begin(), s.end());
}

dnnl::memory::desc Plain(const Shape& s) {
  const dnnl::memory::dims d = Dims(s);
  dnnl::memory::dims strides(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * d[i + 1];
  return dnnl::memory::desc(d, dnnl::memory::data_type::f32, strides);
}

bool Kernel::ReadsBlocked(const Params& params, absl::Span<const InputInfo> inputs, size_t i) const {
  if (!IsBlocked(params) || !Blockable(inputs[i].shape)) return false;
  const std::vector<size_t> layout_inputs = LayoutInputs(params, inputs);
  return std::find(layout_inputs.begin(), layout_inputs.end(), i) != layout_inputs.end();
}

int64_t BlockSize() {
  static const int64_t block = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core ? 16 : 8;
  return block;
}

bool HasEmptyTensor(absl::Span<const InputInfo> inputs, absl::Span<const OutputType> outputs) {
  for (const InputInfo& in : inputs)
    if (in.present && in.shape_known && NumElements(in.shape) == 0) return true;
  for (const OutputType& out : outputs)
    if (out.shape_known && NumElements(out.shape) == 0) return true;
  return false;
}

bool Blockable(const Shape& shape) { return shape.size() == 4 && shape[1] % BlockSize() == 0; }

bool IsBlocked(const Params& params) { return params.Str("layout", "plain") == "blocked"; }

Params WithLayout(Params params, bool blocked) {
  if (blocked)
    params.Set("layout", "blocked");
  else
    params.Erase("layout");
  return params;
}

bool CanRunBlocked(const Kernel& kernel, const Params& params, absl::Span<const InputInfo> inputs,
                   absl::Span<const OutputType> outputs) {
  const std::vector<size_t> layout_inputs = kernel.LayoutInputs(WithLayout(params, true), inputs);
  if (layout_inputs.empty()) return false;
  for (size_t i : layout_inputs)
    if (!Blockable(inputs[i].shape)) return false;
  for (const OutputType& o : outputs)
    if (!Blockable(o.shape)) return false;
  return true;
}

dnnl::memory::desc Layout(const Shape& shape, const Params& params) {
  if (!IsBlocked(params) || !Blockable(shape)) return Plain(shape);
  const auto tag = BlockSize() == 16 ? dnnl::memory::format_tag::nChw16c : dnnl::memory::format_tag::nChw8c;
  return dnnl::memory::desc(Dims(shape), dnnl::memory::data_type::f32, tag);
}

}  // namespace taso::cpu
