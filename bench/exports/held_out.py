#!/usr/bin/python3
"""The patterns of patterns.py at other sizes, held out from the suite (its tests and
tables use patterns.py's files): what a user's own export of the same kind of model gets.
Exported at opset 17 with seed 1, each with its hand merge, as patterns.py does.

Usage: held_out.py OUT_DIR [NAME ...] [--opset N] [--seed S]
(bench/export_bench.sh times them with EXPORT_PATTERNS=bench/exports/held_out.py.)
"""
from patterns import (DetectionHeads, EinsumAttention, Experts, GRUCell, Heads, LoRAMLP, QKVAttention, Tower, main)

HELD_OUT = {
    "lora_mlp_d1024_t1": (lambda: LoRAMLP(d=1024, r=8), [(1, 1, 1024)]),
    "lora_mlp_d1024_2d": (lambda: LoRAMLP(d=1024, r=8), [(4, 1024)]),
    "lora_mlp_d1024_t16": (lambda: LoRAMLP(d=1024, r=8), [(2, 16, 1024)]),
    "qkv_d512_t64": (lambda: QKVAttention(d=512, heads=8), [(1, 64, 512)]),
    "heads6_cat": (lambda: Heads(n=6, d=384, h=96, o=24), [(16, 384)]),
    "heads6_apart": (lambda: Heads(n=6, d=384, h=96, o=24, joined=False), [(16, 384)]),
    "experts8": (lambda: Experts(n=8, d=256, h=512), [(32, 256)]),
    "gru_d192": (lambda: GRUCell(d=192, steps=8), [(8, 1, 192)]),
    "detection_c128": (lambda: DetectionHeads(c=128, classes=80, boxes=24), [(1, 128, 40, 40)]),
    "tower_d384": (lambda: Tower(d=384, h=768), [(8, 384), (8, 384)]),
    "einsum_d512_t128": (lambda: EinsumAttention(d=512, heads=8), [(1, 128, 512)]),
}

if __name__ == "__main__":
    main(HELD_OUT, opset=17, seed=1)
