#!/usr/bin/python3
"""strata_torch: a Strata checkpoint as a torch.nn.Module with strata's forward, read with h5py.

    sys.path.insert(0, "tools/python"); import strata_torch
    model = strata_torch.load("ckpt/")        # a checkpoint, or a checkpoint directory's LATEST
    batch = model.encode(rows)                # rows: field lists in the checkpoint's input layout
    probabilities = model(*batch[:3])         # torch.float32 [N]; batch[3] holds the labels

The forward is strata's: each slot sum-pools the embeddings of its keys (no key: zeros; a
mean-pooled multihot slot divides by their count), the pooled slots (slot-major) and the dense
features feed the MLP (ReLU between layers, one logit), then a sigmoid. By /model attr model
(strata_layers.py): deepfm adds the FM term over the pooled slots; dcn puts the cross layers
(/dense/cross) before the MLP; dlrm's MLP reads the dot interaction of its bottom MLP's output
(/dense/bottom) and the pooled slots; wdl's rows hold a wide weight after the embedding, which
pools like it and adds to the logit while the MLP reads the embeddings. A slot of several
units (a schema with widths) is that many consecutive slots holding the token's key in each.
Keys are strata's: SlotKey(slot, token hash) with hex tokens of up to 16 digits
taken as their value and other text hashed with FNV-1a, bucket indices and hours as the token
value. A key the checkpoint does not hold gets strata's initial row, a pure function of (key,
seed), or zeros when the model was trained with admission (/model attr admit_min_count > 0: a
key without a row was never admitted), so predictions agree with strata-predict's to float
rounding. Rows stored in bf16 or fp16 (/model attr row_dtype) are read back as f32, and initial
rows are rounded as strata stores them.

Checkpoint layout (include/strata/ckpt/format.h): meta.h5 holds the model shape in /model, the
input layout as schema text in the root attribute input_schema (Criteo's layout when absent) and
the MLP per layer in /dense/layers/<l>/{weight (in, out), bias}; rows-<r>.h5 hold /rows/keys and
/rows/embedding.

CLI, for files: strata_torch.py --checkpoint DIR --input FILE... --out FILE [--schema FILE]
writes one probability per row and prints rows, AUC and logloss.
"""
import argparse
import glob
import os
import sys

import h5py
import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_schema  # noqa: E402
from strata_layers import CrossNet, dot_interaction, fm_term  # noqa: E402



def mix64(x):
    """splitmix64's finalizer on uint64 arrays (strata/common/hash.h Mix64)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def token_hash(token):
    """CriteoTokenHash: a hex string of 1..16 digits is its value, other text its FNV-1a 64."""
    if len(token) <= 16:
        try:
            return int(token, 16)
        except ValueError:
            pass
    h = 0xCBF29CE484222325
    for byte in token.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def slot_key(slot, tokens):
    """SlotKey(slot, token) for an array of token values."""
    return (np.uint64(slot) << np.uint64(56)) | (mix64(np.asarray(tokens, dtype=np.uint64)) >> np.uint64(8))


def resolve(path):
    latest = os.path.join(path, "LATEST")
    if os.path.exists(latest):
        with open(latest) as f:
            return os.path.join(path, f.read().strip())
    return path


class StrataModel(nn.Module):
    def __init__(self, meta, keys, embeddings):
        super().__init__()
        model = meta["model"]
        self.kind = text_attr(model, "model", "dnn")
        self.embedding_dim = int(model.attrs["embedding_dim"])
        self.dim = row_dim(model)  # wdl's rows hold the wide weight after the embedding
        self.seed = int(model.attrs["seed"])
        self.init_scale = np.float32(model.attrs["init_scale"])
        self.admits = int(model.attrs.get("admit_min_count", 0)) > 0
        self.row_dtype = text_attr(model, "row_dtype", "fp32")
        if self.kind not in ("dnn", "deepfm", "dcn", "dlrm", "wdl"):
            raise ValueError(f"unknown /model attr model {self.kind!r}")
        text = meta.attrs.get("input_schema", b"")
        text = text.decode() if isinstance(text, bytes) else text
        self.schema = strata_schema.Schema(text or strata_schema.CRITEO_SCHEMA, "the checkpoint's input_schema")
        order = np.argsort(keys)
        self.keys, self.embeddings = keys[order], embeddings[order]
        layers = meta["dense"]["layers"]
        self.layers = nn.ModuleList()
        for name in sorted(layers, key=int):
            self.layers.append(linear_from(layers[name]))
        self.cross = None
        if self.kind == "dcn":
            width = self.layers[0].weight.shape[1]
            self.cross = CrossNet(width, int(model.attrs["cross_layers"]), int(model.attrs["cross_rank"]))
            self.cross.load(meta["dense"]["cross"])
        self.bottom = None
        if self.kind == "dlrm" and "bottom" in meta["dense"]:
            self.bottom = nn.Sequential()
            for name in sorted(meta["dense"]["bottom"], key=int):
                self.bottom.extend([linear_from(meta["dense"]["bottom"][name]), nn.ReLU()])
        self.num_slots = int(model.attrs["num_slots"])
        self.mean_slots = np.zeros(self.num_slots, dtype=bool)
        mean = model.attrs.get("mean_slots")
        if mean is not None and not isinstance(mean, h5py.Empty):
            self.mean_slots[np.asarray(mean, dtype=np.int64)] = True

    def initial_rows(self, keys):
        """InitRow's embeddings (model/optimizer.cpp) of keys: uniform(-s, s) from (key, seed)."""
        seed_mix = mix64(np.array([self.seed ^ 0x726F772D696E6974], dtype=np.uint64))[0]
        base = mix64(keys ^ seed_mix)
        with np.errstate(over="ignore"):
            h = mix64(base[:, None] + np.arange(self.dim, dtype=np.uint64)[None, :])
        u = (h >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)
        return to_row_dtype(self.init_scale * (np.float32(2.0) * u - np.float32(1.0)), self.row_dtype)

    def lookup(self, keys):
        """Embeddings [K, dim] of keys: the checkpoint's rows, else the initial ones (zeros with admission)."""
        at = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        found = (self.keys[at] == keys) if len(self.keys) else np.zeros(len(keys), dtype=bool)
        out = np.empty((len(keys), self.dim), dtype=np.float32)
        out[found] = self.embeddings[at[found]]
        out[~found] = 0.0 if self.admits else self.initial_rows(keys[~found])
        return torch.from_numpy(out)

    def encode(self, rows):
        """Field lists -> (key embeddings [K, dim], bag of each key [K] (example * slots + slot),
        dense [N, D], labels [N])."""
        keys, bags = [], []
        s = self.schema
        dense = np.zeros((len(rows), len(s.dense)), dtype=np.float32)
        for n, fields in enumerate(rows):
            slot = 0
            for i, (name, role, arg) in enumerate(s.columns):
                v = fields[i]
                if role in strata_schema.SLOT_ROLES:  # each slot spans s.units[i] unit slots
                    for group in self.tokens(role, arg, v):
                        for unit in range(slot, slot + s.units[i]):
                            keys += [int(slot_key(unit, [t])[0]) for t in group]
                            bags += [n * self.num_slots + unit] * len(group)
                        slot += s.units[i]
            for j, (i, log1p) in enumerate(s.dense):
                x = float(fields[i]) if fields[i] else 0.0
                dense[n, j] = np.float32(np.sign(x) * np.log1p(abs(x))) if log1p else np.float32(x)
        labels = np.array([float(f[s.label]) for f in rows], dtype=np.float32)
        embedded = self.lookup(np.array(keys, dtype=np.uint64))
        return embedded, torch.tensor(bags, dtype=torch.int64), torch.from_numpy(dense), labels

    @staticmethod
    def tokens(role, arg, v):
        """Token values per slot the column feeds (one slot; time two), [] per slot when empty."""
        if role == "time":
            if not v:
                return [[], []]
            from datetime import datetime
            t = datetime.strptime(v, arg)
            return [[t.hour], [(t.weekday() + 1) % 7]]
        if not v:
            return [[]]
        if role == "bucketize":
            return [[int(np.searchsorted(np.array([float(b) for b in arg.split(",")]), float(v), side="right"))]]
        if role == "multihot":
            return [[token_hash(t) for t in v.split(arg[0]) if t]]
        return [[token_hash(v)]]

    def forward(self, embedded, bags, dense):
        n = dense.shape[0]
        pooled = torch.zeros(n * self.num_slots, self.dim).index_add_(0, bags, embedded)
        if self.mean_slots.any():  # model/pooling.h: a mean slot with k > 1 keys times 1/k
            keys = torch.bincount(bags, minlength=n * self.num_slots).float()
            mean = torch.from_numpy(np.tile(self.mean_slots, n)) & (keys > 1)
            pooled[mean] *= (1.0 / keys[mean]).unsqueeze(1)
        x = torch.cat((pooled.view(n, -1), dense), dim=1)
        if self.kind == "wdl":  # the MLP reads the embeddings; the wide weights sum into the logit
            slots = pooled.view(n, self.num_slots, self.dim)
            wide = slots[:, :, self.embedding_dim].sum(dim=1)
            x = torch.cat((slots[:, :, :self.embedding_dim].reshape(n, -1), dense), dim=1)
        if self.kind == "dlrm":
            x = dot_interaction(self.bottom(dense) if self.bottom is not None else None,
                                pooled.view(n, self.num_slots, self.dim))
        if self.cross is not None:
            x = self.cross(x)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        z = x.squeeze(1)
        if self.kind == "wdl":
            z = z + wide
        if self.kind == "deepfm":  # model/fm.h: the FM term over the pooled slots
            z = z + fm_term(pooled.view(n, self.num_slots, self.dim))
        return torch.sigmoid(z)


def row_dim(model):
    """Floats of a row's embedding (ModelSpec::row_dim): wdl's rows add the wide weight."""
    return int(model.attrs["embedding_dim"]) + (1 if text_attr(model, "model", "dnn") == "wdl" else 0)


def linear_from(group):
    """nn.Linear of a checkpoint's {weight (in, out), bias} group."""
    w = group["weight"][...]
    linear = nn.Linear(w.shape[0], w.shape[1])
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(w.T.copy()))
        linear.bias.copy_(torch.from_numpy(group["bias"][...]))
    return linear


def text_attr(group, name, default):
    value = group.attrs.get(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def to_row_dtype(x, dtype):
    """f32 values as strata stores them in rows of dtype, back as f32: bf16 and fp16 round to
    nearest even (common/half.h)."""
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
        bits = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
        return bits.view(np.float32)
    return x


def embeddings_of(dataset, dtype):
    """/rows/embedding as f32: 16-bit rows hold the raw bits of bf16 or fp16 values."""
    raw = dataset[...]
    if dtype == "bf16":
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if dtype == "fp16":
        return raw.view(np.float16).astype(np.float32)
    return raw


def chain(ckpt):
    """The checkpoints ckpt's rows come from, oldest first: an increment's bases, then itself."""
    links = [ckpt]
    while True:
        with h5py.File(os.path.join(links[0], "meta.h5"), "r") as meta:
            kind = meta.attrs["kind"]
            if (kind.decode() if isinstance(kind, bytes) else kind) != "increment":
                return links
            base = int(meta.attrs["base_pass"])
        links.insert(0, os.path.join(os.path.dirname(links[0]), "ckpt-%08d" % base))


def load(path):
    """The model of a checkpoint (or of LATEST in a checkpoint directory), with its bases."""
    ckpt = resolve(path)
    with h5py.File(os.path.join(ckpt, "meta.h5"), "r") as meta:
        dtype = text_attr(meta["model"], "row_dtype", "fp32")
        dim = row_dim(meta["model"])
    keys, embeddings = np.zeros(0, np.uint64), np.zeros((0, dim), np.float32)
    for link in chain(ckpt):
        deleted = [h5py.File(f, "r")["deleted/keys"][...] for f in glob.glob(os.path.join(link, "deleted-*.h5"))]
        if deleted:  # an increment's evictions go before its rows
            kept = ~np.isin(keys, np.concatenate(deleted))
            keys, embeddings = keys[kept], embeddings[kept]
        for f in sorted(glob.glob(os.path.join(link, "rows-*.h5"))):
            with h5py.File(f, "r") as h:
                keys = np.concatenate([keys, h["rows/keys"][...]])
                embeddings = np.concatenate([embeddings, embeddings_of(h["rows/embedding"], dtype)])
    _, newest = np.unique(keys[::-1], return_index=True)  # a key's newest row (increments come last)
    with h5py.File(os.path.join(ckpt, "meta.h5"), "r") as meta:
        return StrataModel(meta, keys[::-1][newest], embeddings[::-1][newest])


def main():
    p = argparse.ArgumentParser(description="Scores files with a Strata checkpoint in PyTorch.")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--input", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--schema", help="input layout (default: the checkpoint's)")
    a = p.parse_args()
    model = load(a.checkpoint)
    if a.schema:
        with open(a.schema) as f:
            model.schema = strata_schema.Schema(f.read(), a.schema)
    rows = strata_schema.read_rows(a.input, model.schema)
    embedded, bags, dense, labels = model.encode(rows)
    with torch.no_grad():
        prob = model(embedded, bags, dense).double().numpy()
    np.savetxt(a.out, prob, fmt="%.9g")
    eps = 1e-7
    clipped = np.clip(prob, eps, 1 - eps)
    logloss = -np.mean(labels * np.log(clipped) + (1 - labels) * np.log(1 - clipped))
    print(f"strata_torch: rows={len(prob)} logloss={logloss:.6f}")


if __name__ == "__main__":
    main()
