#!/usr/bin/env python3
# PyTorch eager reference of the Qwen3-MoE forward pass (contracts section 7) for npu-replay's
# benchmark: same model folder, weights converted once to f32, the same prompt as replay-bench.
# Usage: replay_torch.py MODEL_DIR C_LOGITS.f32 PREFILL_LEN [PREFILL_LEN...] [--decode N]
# Prints prefill/decode timings and the relative max difference against the C logits.
import json, mmap, os, struct, sys, time
import torch

torch.set_grad_enabled(False)


def load(d):
    idx = os.path.join(d, "model.safetensors.index.json")
    files = sorted(set(json.load(open(idx))["weight_map"].values())) if os.path.exists(idx) else ["model.safetensors"]
    W = {}
    for f in files:
        fh = open(os.path.join(d, f), "rb")
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        (n,) = struct.unpack("<Q", mm[:8])
        hdr = json.loads(mm[8:8 + n])
        for name, t in hdr.items():
            if name == "__metadata__":
                continue
            b, e = t["data_offsets"]
            raw = bytearray(mm[8 + n + b: 8 + n + e])
            dt = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}[t["dtype"]]
            W[name] = torch.frombuffer(raw, dtype=dt).reshape(t["shape"]).float()
    return W


class Qwen3Moe:
    def __init__(self, d):
        self.c = json.load(open(os.path.join(d, "config.json")))
        self.W = load(d)
        c = self.c
        hd = c["head_dim"]
        self.inv = c["rope_theta"] ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
        self.kv = []

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"]) * w

    def rope(self, x, pos):
        ang = (pos.double()[:, None] * self.inv[None, :]).float()
        cos = torch.cat([ang.cos()] * 2, -1)[:, None, :]
        sin = torch.cat([ang.sin()] * 2, -1)[:, None, :]
        h = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., h:], x[..., :h]], -1) * sin

    def forward(self, ids, start):
        c, W = self.c, self.W
        n = len(ids)
        nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        x = W["model.embed_tokens.weight"][torch.tensor(ids)]
        pos = torch.arange(start, start + n)
        for l in range(c["num_hidden_layers"]):
            p = "model.layers.%d." % l
            h = self.rms(x, W[p + "input_layernorm.weight"])
            q = (h @ W[p + "self_attn.q_proj.weight"].T).view(n, nh, hd)
            k = (h @ W[p + "self_attn.k_proj.weight"].T).view(n, nkv, hd)
            v = (h @ W[p + "self_attn.v_proj.weight"].T).view(n, nkv, hd)
            q = self.rope(self.rms(q, W[p + "self_attn.q_norm.weight"]), pos)
            k = self.rope(self.rms(k, W[p + "self_attn.k_norm.weight"]), pos)
            if start == 0:
                if len(self.kv) <= l:
                    self.kv.append(None)
                self.kv[l] = (k, v)
            else:
                self.kv[l] = (torch.cat([self.kv[l][0], k]), torch.cat([self.kv[l][1], v]))
            K, V = self.kv[l]
            g = nh // nkv
            Kx = K.repeat_interleave(g, 1).transpose(0, 1)
            Vx = V.repeat_interleave(g, 1).transpose(0, 1)
            s = q.transpose(0, 1) @ Kx.transpose(1, 2) / hd ** 0.5
            mask = torch.arange(K.shape[0])[None, :] > pos[:, None]
            s = s.masked_fill(mask[None], float("-inf")).softmax(-1)
            a = (s @ Vx).transpose(0, 1).reshape(n, nh * hd) @ W[p + "self_attn.o_proj.weight"].T
            x = x + a
            h = self.rms(x, W[p + "post_attention_layernorm.weight"])
            pr = (h @ W[p + "mlp.gate.weight"].T).softmax(-1)
            wk, ik = pr.topk(c["num_experts_per_tok"], -1)
            if c["norm_topk_prob"]:
                wk = wk / wk.sum(-1, keepdim=True)
            out = torch.zeros_like(h)
            for e in ik.unique().tolist():
                rows, slot = (ik == e).nonzero(as_tuple=True)
                ep = p + "mlp.experts.%d." % e
                hs = h[rows]
                y = (torch.nn.functional.silu(hs @ W[ep + "gate_proj.weight"].T) * (hs @ W[ep + "up_proj.weight"].T)) @ W[ep + "down_proj.weight"].T
                out.index_add_(0, rows, y * wk[rows, slot, None])
            x = x + out
        hN = self.rms(x[-1:], W["model.norm.weight"])
        head = W["model.embed_tokens.weight"] if c["tie_word_embeddings"] else W["lm_head.weight"]
        return (hN @ head.T)[0]


def main():
    args = sys.argv[1:]
    decode = 8
    if "--decode" in args:
        i = args.index("--decode"); decode = int(args[i + 1]); del args[i:i + 2]
    model_dir, c_logits, lens = args[0], args[1], [int(a) for a in args[2:]]
    torch.set_num_threads(os.cpu_count())
    m = Qwen3Moe(model_dir)
    V = m.c["vocab_size"]
    toks = [(i * 7919 + 13) % V for i in range(max(lens + [17]) + decode + 1)]
    for j, L in enumerate(lens):
        t = time.monotonic(); lg = m.forward(toks[:L], 0); s = time.monotonic() - t
        print("torch prefill %d tokens: %.3f s, %.1f tokens/s" % (L, s, L / s))
        if j == 0 and os.path.exists(c_logits):
            c = torch.frombuffer(bytearray(open(c_logits, "rb").read()), dtype=torch.float32)
            rel = ((c - lg).abs().max() / lg.abs().max()).item()
            print("logits C vs torch (prefill %d): max |diff| / max |logit| = %.3g (%s 1e-4)" % (L, rel, "within" if rel < 1e-4 else "NOT within"))
    m.forward(toks[:16], 0)
    m.forward([toks[16]], 16)
    t = time.monotonic()
    for i in range(decode):
        m.forward([toks[17 + i]], 17 + i)
    s = (time.monotonic() - t) / decode
    print("torch decode: %.1f ms/token, %.2f tokens/s" % (s * 1e3, 1 / s))


if __name__ == "__main__":
    main()
