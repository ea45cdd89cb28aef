#!/usr/bin/python3
"""A second, independent byte-level BPE tokenizer for the tests: plain Python over the
tokenizer.json (json module), the `regex` module for the split pattern (\\p{L} and \\p{N}),
unicodedata for NFC, and the textbook BPE loop (merge the lowest-ranked adjacent pair,
leftmost first, until none is left). It shares no code with libgolden/tok.

  tok_oracle.py encode TOKENIZER FILE   one line of ids per line of FILE (without its \\n)
  tok_oracle.py whole TOKENIZER FILE    the ids of the whole file, one line
  tok_oracle.py bench TOKENIZER FILE N  encode FILE N times: "TOKENS SECONDS TOKENS_PER_S"
"""
import json
import sys
import time
import unicodedata

import regex

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


class Tokenizer:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        model = doc["model"]
        assert model["type"] == "BPE"
        self.vocab = model["vocab"]
        self.ranks = {}
        for i, m in enumerate(model["merges"]):
            a, b = m.split(" ") if isinstance(m, str) else m
            self.ranks[(a, b)] = i
        self.added = sorted(((t["content"], t["id"]) for t in doc.get("added_tokens") or []),
                            key=lambda x: -len(x[0]))
        norm = doc.get("normalizer")
        self.nfc = bool(norm) and (norm["type"] == "NFC" or (
            norm["type"] == "Sequence" and [n["type"] for n in norm["normalizers"]] == ["NFC"]))
        pre = doc["pre_tokenizer"]
        steps = pre["pretokenizers"] if pre["type"] == "Sequence" else [pre]
        self.steps = []
        for s in steps:
            if s["type"] == "Split":
                assert s["behavior"] == "Isolated" and not s.get("invert")
                p = s["pattern"]
                self.steps.append(("split", regex.compile(p["Regex"]) if "Regex" in p
                                   else regex.compile(regex.escape(p["String"]))))
            else:
                assert s["type"] == "ByteLevel"
                if s["add_prefix_space"]:
                    self.steps.append(("prefix", None))
                if s.get("use_regex", True):
                    self.steps.append(("split", regex.compile(GPT2)))
        self.b2u = bytes_to_unicode()
        self.ignore_merges = model.get("ignore_merges", False)

    def split(self, pattern, s):
        out, pos = [], 0
        for m in pattern.finditer(s):
            if m.start() == m.end():
                continue
            if m.start() > pos:
                out.append(s[pos:m.start()])
            out.append(m.group(0))
            pos = m.end()
        if pos < len(s):
            out.append(s[pos:])
        return out

    def bpe(self, word):
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        parts = list(word)
        while len(parts) > 1:
            best, at = None, -1
            for i in range(len(parts) - 1):
                r = self.ranks.get((parts[i], parts[i + 1]))
                if r is not None and (best is None or r < best):
                    best, at = r, i
            if best is None:
                break
            parts[at:at + 2] = [parts[at] + parts[at + 1]]
        return [self.vocab[p] for p in parts]

    def segment(self, s):
        if self.nfc:
            s = unicodedata.normalize("NFC", s)
        pieces = [s] if s else []
        for kind, pat in self.steps:
            if kind == "prefix":
                pieces = [p if p.startswith(" ") else " " + p for p in pieces]
            else:
                pieces = [q for p in pieces for q in self.split(pat, p)]
        ids = []
        for p in pieces:
            ids += self.bpe("".join(self.b2u[b] for b in p.encode("utf-8")))
        return ids

    def encode(self, s):
        ids, seg, i = [], 0, 0
        while i < len(s):
            for content, tid in self.added:  # longest first
                if s.startswith(content, i):
                    ids += self.segment(s[seg:i]) + [tid]
                    i += len(content)
                    seg = i
                    break
            else:
                i += 1
        return ids + self.segment(s[seg:])


def main():
    cmd, tok = sys.argv[1], Tokenizer(sys.argv[2])
    with open(sys.argv[3], "rb") as f:
        text = f.read().decode("utf-8")
    if cmd == "encode":
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            print(" ".join(map(str, tok.encode(line))))
    elif cmd == "whole":
        print(" ".join(map(str, tok.encode(text))))
    elif cmd == "bench":
        reps, total = int(sys.argv[4]), 0
        t0 = time.perf_counter()
        for _ in range(reps):
            total += len(tok.encode(text))
        s = time.perf_counter() - t0
        print("%d %.6f %.0f" % (total, s, total / s))


if __name__ == "__main__":
    main()
