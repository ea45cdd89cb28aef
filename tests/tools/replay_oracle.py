#!/usr/bin/env python3
# An independent Qwen3-MoE forward pass in numpy (float64) for npu-replay's tests: reads the
# model folder itself and checks a run golden's logits, taps and greedy tokens against it.
# Usage: replay_oracle.py MODEL_DIR GOLDEN.h5 CASE_ID [CASE_ID...]; prints "ok"/"not ok" lines.
import json, os, struct, sys
import numpy as np
import h5py


def load_tensors(d):
    files = []
    idx = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(idx):
        files = sorted(set(json.load(open(idx))["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    out = {}
    for f in files:
        raw = open(os.path.join(d, f), "rb").read()
        (n,) = struct.unpack("<Q", raw[:8])
        hdr = json.loads(raw[8:8 + n])
        base = 8 + n
        for name, t in hdr.items():
            if name == "__metadata__":
                continue
            b, e = t["data_offsets"]
            buf = raw[base + b: base + e]
            if t["dtype"] == "BF16":
                a = (np.frombuffer(buf, "<u2").astype(np.uint32) << 16).view(np.float32)
            elif t["dtype"] == "F16":
                a = np.frombuffer(buf, "<f2")
            else:
                a = np.frombuffer(buf, "<f4")
            out[name] = a.astype(np.float64).reshape(t["shape"])
    return out


class Model:
    def __init__(self, d):
        self.c = json.load(open(os.path.join(d, "config.json")))
        self.w = load_tensors(d)

    def rms(self, x, w):
        eps = self.c["rms_norm_eps"]
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def rope(self, x, pos):
        hd = x.shape[-1]
        half = hd // 2
        inv = self.c["rope_theta"] ** (-2.0 * np.arange(half) / hd)
        ang = np.asarray(pos, dtype=np.float64)[:, None] * inv[None, :]
        cos = np.concatenate([np.cos(ang)] * 2, -1)[:, None, :]
        sin = np.concatenate([np.sin(ang)] * 2, -1)[:, None, :]
        rot = np.concatenate([-x[..., half:], x[..., :half]], -1)
        return x * cos + rot * sin

    def forward(self, ids):
        """All positions of ids at once (causal): per-layer taps and the logits of every position."""
        c, W = self.c, self.w
        H, nh, nkv, hd = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        n = len(ids)
        x = W["model.embed_tokens.weight"][ids]
        taps = {}
        pos = np.arange(n)
        for l in range(c["num_hidden_layers"]):
            p = "model.layers.%d." % l
            h = self.rms(x, W[p + "input_layernorm.weight"])
            q = (h @ W[p + "self_attn.q_proj.weight"].T).reshape(n, nh, hd)
            k = (h @ W[p + "self_attn.k_proj.weight"].T).reshape(n, nkv, hd)
            v = (h @ W[p + "self_attn.v_proj.weight"].T).reshape(n, nkv, hd)
            q = self.rope(self.rms(q, W[p + "self_attn.q_norm.weight"]), pos)
            k = self.rope(self.rms(k, W[p + "self_attn.k_norm.weight"]), pos)
            g = nh // nkv
            out = np.zeros((n, nh, hd))
            mask = np.tril(np.ones((n, n), bool))
            for hh in range(nh):
                s = q[:, hh, :] @ k[:, hh // g, :].T / np.sqrt(hd)
                s = np.where(mask, s, -np.inf)
                s = np.exp(s - s.max(-1, keepdims=True))
                s /= s.sum(-1, keepdims=True)
                out[:, hh, :] = s @ v[:, hh // g, :]
            attn = out.reshape(n, nh * hd) @ W[p + "self_attn.o_proj.weight"].T
            x = x + attn
            h2 = self.rms(x, W[p + "post_attention_layernorm.weight"])
            dense = l in c["mlp_only_layers"] or c["num_experts"] == 0 or (l + 1) % c["decoder_sparse_step"] != 0
            if dense:
                a = h2 @ W[p + "mlp.gate_proj.weight"].T
                mlp = (a / (1 + np.exp(-a)) * (h2 @ W[p + "mlp.up_proj.weight"].T)) @ W[p + "mlp.down_proj.weight"].T
                x = x + mlp
                taps.update({"layers/%d/attn_out" % l: attn, "layers/%d/mlp_out" % l: mlp,
                             "layers/%d/hidden" % l: x.copy()})
                continue
            rl = h2 @ W[p + "mlp.gate.weight"].T
            pr = np.exp(rl - rl.max(-1, keepdims=True))
            pr /= pr.sum(-1, keepdims=True)
            K = c["num_experts_per_tok"]
            ids_k = np.argsort(-pr, axis=-1, kind="stable")[:, :K]
            wk = np.take_along_axis(pr, ids_k, -1)
            if c["norm_topk_prob"]:
                wk = wk / wk.sum(-1, keepdims=True)
            mlp = np.zeros((n, H))
            for t in range(n):
                for j in range(K):
                    e = ids_k[t, j]
                    ep = p + "mlp.experts.%d." % e
                    a = h2[t] @ W[ep + "gate_proj.weight"].T
                    u = h2[t] @ W[ep + "up_proj.weight"].T
                    mlp[t] += wk[t, j] * ((a / (1 + np.exp(-a)) * u) @ W[ep + "down_proj.weight"].T)
            x = x + mlp
            taps.update({"layers/%d/attn_out" % l: attn, "layers/%d/mlp_out" % l: mlp,
                         "layers/%d/hidden" % l: x.copy(), "layers/%d/router/logits" % l: rl,
                         "layers/%d/router/topk_ids" % l: ids_k,
                         "layers/%d/router/topk_weights" % l: wk})
        hN = self.rms(x, W["model.norm.weight"])
        head = W["model.embed_tokens.weight"] if c["tie_word_embeddings"] else W["lm_head.weight"]
        return hN @ head.T, taps


def greedy_run(m, prefix, steps):
    """Greedy decoding from scratch: tokens and the logits rows they came from."""
    ids = list(prefix)
    toks, rows = [], []
    for _ in range(steps):
        logits, taps = m.forward(np.array(ids))
        row = logits[-1]
        t = int(np.argmax(row))
        toks.append(t)
        rows.append(row)
        ids.append(t)
    # the taps cover every position processed: prefix, then one per decode step
    logits, taps = m.forward(np.array(ids[:-1]))
    return np.array(toks), np.array(rows), taps


def main():
    model_dir, golden = sys.argv[1], sys.argv[2]
    m = Model(model_dir)
    f = h5py.File(golden, "r")
    bad = 0

    def check(name, ok, detail=""):
        nonlocal bad
        print(("ok " if ok else "not ok ") + name + ("" if ok else ": " + detail))
        bad += not ok

    for case in sys.argv[3:]:
        g = f["cases/" + case]
        ids = g["input_ids"][()]
        O = g["tokens"].shape[0]
        toks, rows, taps = greedy_run(m, ids, O)
        check("%s tokens (greedy) match numpy" % case, np.array_equal(g["tokens"][()], toks),
              "%s vs %s" % (g["tokens"][()], toks))
        lg = g["logits"][()]
        err = np.abs(lg - rows).max() / np.abs(rows).max()
        check("%s logits within 1e-4 of numpy" % case, err < 1e-4, "relative error %g" % err)
        for name, ref in taps.items():
            if name not in g:
                check("%s tap %s present" % (case, name), False, "missing")
                continue
            got = g[name][()]
            if got.shape != ref.shape:
                check("%s tap %s shape" % (case, name), False, "%s vs %s" % (got.shape, ref.shape))
            elif name.endswith("topk_ids"):
                check("%s tap %s equal" % (case, name), np.array_equal(got, ref),
                      "%d differ" % int((got != ref).sum()))
            else:
                e = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)
                check("%s tap %s within 1e-4" % (case, name), e < 1e-4, "relative error %g" % e)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
