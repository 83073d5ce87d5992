#!/usr/bin/python3
"""Mixtures of experts written in other ways than patterns.py's Experts, held out from the
suite: to see which forms the merge of gated mixtures (taso/rewrite_gated_mixtures.h)
reaches. Exported with dynamic axes at opset 14, as users export.

Usage: moe_variants.py OUT_DIR   (writes OUT_DIR/NAME.onnx and prints the names)
  moe8_gelu       eight experts Linear(256,512)-GELU-Linear(512,256), x [batch, 256]
  moe4_t32        four experts Linear(512,1024)-ReLU-Linear(1024,512), x [batch, tokens, 512]
  moe4_unsqueeze  the gate's column read as g[..., e].unsqueeze(-1) (Gather and Unsqueeze)
  moe4_stack      the experts' outputs stacked and summed: (stack(...) * g[..., None, :]).sum(-1)
  moe4_top2       four experts Linear(128,256)-ReLU-Linear(256,128), x [batch, tokens, 128], the
                  gate's two largest weights kept (topk, scatter) and the rest zero
  moe4_t32_functions  moe4_t32 with each expert a model-local function (export_modules_as_functions,
                  opset 15): the main graph calls Expert four times
"""
import sys

import torch
import torch.nn as nn


class Expert(nn.Module):
    def __init__(self, d, h, act):
        super().__init__()
        self.first, self.second, self.act = nn.Linear(d, h), nn.Linear(h, d), act

    def forward(self, x):
        return self.second(self.act(self.first(x)))


class MoE(nn.Module):
    def __init__(self, n, d, h, act=torch.relu, style="slice"):
        super().__init__()
        self.gate = nn.Linear(d, n)
        self.experts = nn.ModuleList(Expert(d, h, act) for _ in range(n))
        self.style = style

    def forward(self, x):
        g = torch.softmax(self.gate(x), -1)
        if self.style == "slice":
            return sum(g[..., i:i + 1] * e(x) for i, e in enumerate(self.experts))
        if self.style == "top2":
            top, index = g.topk(2, -1)
            g = torch.zeros_like(g).scatter(-1, index, top)
            return sum(g[..., i:i + 1] * e(x) for i, e in enumerate(self.experts))
        if self.style == "unsqueeze":
            return sum(g[..., i].unsqueeze(-1) * e(x) for i, e in enumerate(self.experts))
        return (torch.stack([e(x) for e in self.experts], -1) * g.unsqueeze(-2)).sum(-1)


VARIANTS = {
    "moe8_gelu": (lambda: MoE(8, 256, 512, nn.functional.gelu), (32, 256)),
    "moe4_t32": (lambda: MoE(4, 512, 1024), (1, 32, 512)),
    "moe4_unsqueeze": (lambda: MoE(4, 512, 1024, style="unsqueeze"), (16, 512)),
    "moe4_stack": (lambda: MoE(4, 512, 1024, style="stack"), (16, 512)),
    "moe4_top2": (lambda: MoE(4, 128, 256, style="top2"), (2, 16, 128)),
    "moe4_t32_functions": (lambda: MoE(4, 512, 1024), (1, 32, 512), {Expert}),
}


def main():
    torch.manual_seed(0)
    out = sys.argv[1]
    for name, (make, shape, *functions) in VARIANTS.items():
        axes = {0: "batch"} if len(shape) == 2 else {0: "batch", 1: "tokens"}
        as_functions = dict(export_modules_as_functions=functions[0], opset_version=15) if functions else {}
        torch.onnx.export(make().eval(), (torch.randn(*shape),), f"{out}/{name}.onnx", input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": axes}, **{"opset_version": 14, **as_functions})
        print(name)


if __name__ == "__main__":
    main()
