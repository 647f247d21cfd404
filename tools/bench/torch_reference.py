#!/usr/bin/python3
"""PyTorch reference for strata-train: the same CTR model, optimizers and hyper-parameters on the
same input files (Criteo TSV, or any layout a strata schema file describes: --schema), to compare
training throughput and eval AUC/logloss.

Model (as strata's): one embedding per slot (26 for Criteo, width --embedding-dim, an empty field
contributes a zero vector), concatenated with the dense features (Criteo's 13 integers, or a
schema's numeric columns) transformed to sign(x) * log1p(|x|) or kept raw (empty -> 0), an MLP
with ReLU (--mlp hidden widths) and one logit; loss is the sigmoid cross-entropy averaged over the
batch. Schema roles as strata reads them: categorical tokens, bucketize (the bucket index), time
(hour-of-day and day-of-week slots), ignore; multihot columns are not supported here. Initialisation: embeddings uniform(-s, s)
(--init-scale), MLP weights He-uniform U(-sqrt(6/fan_in), +sqrt(6/fan_in)), biases 0.

Optimizers and what differs from strata:
- sparse adagrad: torch.optim.Adagrad with initial_accumulator_value=--adagrad-init and eps=0,
  which is exactly strata's s += g^2; w -= lr * g / sqrt(s). sparse rowwise-adagrad: RowwiseAdagrad
  below, strata's s += mean(g^2) over the row; w -= lr * g / sqrt(s), one s a row (TorchRec's
  EXACT_ROWWISE_ADAGRAD without eps). sparse adam: lazy_adam below, strata's lazy Adam with a
  step count a row (torch.optim.SparseAdam counts steps per table). sparse ftrl: ftrl below,
  strata's FTRL-proximal, z and n a coordinate, embeddings starting at 0 as strata's do. sparse sgd: torch.optim.SGD.
- dense adam: torch.optim.Adam(betas=(0.9, 0.999), eps=1e-8), the same bias-corrected form as
  strata's. dense sgd: torch.optim.SGD.
- vocabulary: one row per (slot, token) seen in train OR eval, built before training. A token
  seen only in eval gets a row that training never touches, so it keeps its random init, as
  strata's lazily created rows do. Initial values differ from strata's (which hash the key).
- --batch-size here is the GLOBAL batch: strata's loss is the mean over W workers x batch, so
  compare with strata's --batch-size times its worker count.
- batches are taken in file order (no shuffle), the last partial batch included.

Timing: all input is parsed into tensors first (and moved to --device); examples/s covers the
training loop only.
Threads: --threads N (default: $STRATA_TORCH_THREADS, else torch's default) sets
torch.set_num_threads; --omp-wait-policy sets OMP_WAIT_POLICY before torch is imported (PASSIVE
keeps the OpenMP pool from spinning against the BLAS threads on a small machine).

Last line of output, for scripts:
  torch_reference: examples_per_s=X eval_auc=Y eval_logloss=Z
"""
import argparse
import os
import sys
import time

import numpy as np

from datetime import datetime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from strata_schema import CRITEO_SCHEMA, Schema, read_rows  # noqa: E402


def time_slots(values, fmt):
    """Hour-of-day and day-of-week tokens of timestamps in a strptime format."""
    hours, days = [], []
    for v in values:
        if v == "":
            hours.append("")
            days.append("")
            continue
        t = datetime.strptime(v, fmt)
        hours.append(str(t.hour))
        days.append(str((t.weekday() + 1) % 7))
    return np.array(hours), np.array(days)


def slot_columns(schema, a):
    """Each unit slot's tokens as a string column [N], in strata's slot order: a slot of
    width w is w / unit_width unit slots with their own rows, whose embeddings concatenate
    to the slot's (one embedding table of width w per slot, as strata stores it)."""
    slots = []
    for i, (name, role, arg) in enumerate(schema.columns):
        if role == "categorical":
            columns = [a[:, i]]
        elif role == "bucketize":
            bounds = np.array([float(b) for b in arg.split(",")])
            col = a[:, i]
            idx = np.searchsorted(bounds, np.where(col == "", "0", col).astype(np.float64), side="right")
            columns = [np.where(col == "", "", idx.astype(str))]
        elif role == "time":
            columns = list(time_slots(a[:, i], arg))
        else:
            continue
        for column in columns:
            slots += [column] * schema.units[i]
    return slots


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--train", nargs="+", required=True, help="input files (plain or .gz)")
    p.add_argument("--eval", nargs="+", required=True, help="input files (plain or .gz)")
    p.add_argument("--schema", help="strata schema file of the input layout (default: Criteo TSV)")
    p.add_argument("--model", choices=("dnn", "deepfm", "dcn", "dlrm", "wdl"), default="dnn",
                   help="dnn: the MLP; deepfm: plus the FM term over the slots' embeddings; "
                        "dcn: DCN-v2 cross layers before the MLP; dlrm: bottom MLP and dot interaction; "
                        "wdl: plus a wide weight a key")
    p.add_argument("--bottom-mlp", default="512,256,64", help="dlrm: hidden widths of the dense features' MLP")
    p.add_argument("--cross-layers", type=int, default=3, help="dcn: cross layers")
    p.add_argument("--cross-rank", type=int, default=0, help="dcn: rank of each layer's matrix (0: full)")
    p.add_argument("--embedding-dim", type=int, default=16, help="embedding width per slot")
    p.add_argument("--mlp", default="512,256,128", help="hidden widths, comma-separated")
    p.add_argument("--batch-size", type=int, default=1024, help="global batch size")
    p.add_argument("--epochs", type=int, default=1, help="passes over the training data")
    p.add_argument("--lr-sparse", type=float, default=0.05, help="embedding learning rate")
    p.add_argument("--lr-dense", type=float, default=0.001, help="MLP learning rate")
    p.add_argument("--sparse-optimizer", choices=("adagrad", "rowwise-adagrad", "adam", "ftrl", "sgd"),
                   default="adagrad", help="embedding optimizer")
    p.add_argument("--ftrl-l1", type=float, default=0.0, help="FTRL: L1 strength")
    p.add_argument("--ftrl-l2", type=float, default=0.0, help="FTRL: L2 strength")
    p.add_argument("--ftrl-beta", type=float, default=1.0, help="FTRL: rate smoothing")
    p.add_argument("--dense-optimizer", choices=("adam", "sgd"), default="adam",
                   help="MLP optimizer")
    p.add_argument("--adagrad-init", type=float, default=1e-6,
                   help="initial Adagrad accumulator")
    p.add_argument("--init-scale", type=float, default=0.01,
                   help="embeddings start uniform(-s, s)")
    p.add_argument("--dense-precision", choices=("fp32", "bf16"), default="fp32",
                   help="the MLP's products while training (bf16: CPU autocast)")
    p.add_argument("--seed", type=int, default=2026, help="torch.manual_seed")
    p.add_argument("--device", default="cpu", help="torch device to train on: cpu, cuda, cuda:N")
    env_threads = os.environ.get("STRATA_TORCH_THREADS")
    p.add_argument("--threads", type=int, default=int(env_threads) if env_threads else 0,
                   help="torch intra-op threads (0: torch's default; env STRATA_TORCH_THREADS)")
    p.add_argument("--omp-wait-policy", choices=("ACTIVE", "PASSIVE"),
                   help="OMP_WAIT_POLICY for torch's OpenMP pool (None: inherited)")
    a = p.parse_args()
    try:
        a.hidden = [int(w) for w in a.mlp.split(",") if w]
        a.bottom_hidden = [int(w) for w in a.bottom_mlp.split(",") if w]
    except ValueError:
        p.error(f"--mlp: expected comma-separated integers, got {a.mlp!r}")
    for name in ("embedding_dim", "batch_size", "epochs"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if any(w < 1 for w in a.hidden) or a.threads < 0:
        p.error("--mlp widths must be >= 1 and --threads >= 0")
    return a


def encode(rows, schema):
    """Rows -> labels float32[N], dense float32[N, D] (sign(x) log1p|x| or raw, empty -> 0) and
    embedding rows int64[N, S]: row 0 is the all-zero row of an empty field, then each slot's
    distinct tokens in turn. Returns also the number of embedding rows."""
    a = np.array(rows)  # [N, columns] fixed-width strings
    labels = a[:, schema.label].astype(np.float32)
    dense = np.zeros((len(rows), len(schema.dense)), dtype=np.float32)
    for j, (i, log1p) in enumerate(schema.dense):
        raw = np.where(a[:, i] == "", "0", a[:, i])
        try:
            raw = raw.astype(np.float64)
        except ValueError as e:
            sys.exit(f"torch_reference: non-numeric feature in column {schema.columns[i][0]}: {e}")
        dense[:, j] = np.sign(raw) * np.log1p(np.abs(raw)) if log1p else raw
    slots = slot_columns(schema, a)
    ids = np.zeros((len(rows), len(slots)), dtype=np.int64)
    next_row = 1
    for s, column in enumerate(slots):
        tokens, inverse = np.unique(column, return_inverse=True)
        has_empty = len(tokens) > 0 and tokens[0] == ""  # "" sorts first
        ids[:, s] = np.where(inverse == 0, 0, next_row + inverse - 1) if has_empty else \
            next_row + inverse
        next_row += len(tokens) - has_empty
    return labels, dense, ids, next_row


def exact_auc(labels, scores):
    """Area under the ROC curve with tied scores counted half (Mann-Whitney U)."""
    order = np.argsort(scores, kind="mergesort")
    s = scores[order]
    y = labels[order]
    # Average rank (1-based) of each group of tied scores.
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    ends = np.concatenate((starts[1:], [len(s)]))
    avg_rank = (starts + ends + 1) / 2.0
    ranks = np.repeat(avg_rank, ends - starts)
    pos = y.sum()
    neg = len(y) - pos
    if pos == 0 or neg == 0:
        return float("nan")
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def main():
    a = parse_args()
    if a.omp_wait_policy:
        os.environ["OMP_WAIT_POLICY"] = a.omp_wait_policy
    import torch  # imported after OMP_WAIT_POLICY is set: the OpenMP runtime reads it once
    import torch.nn as nn
    from strata_layers import CrossNet, dot_interaction, fm_term, relu_mlp  # imports torch too

    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    t0 = time.perf_counter()
    if a.schema:
        with open(a.schema) as f:
            schema = Schema(f.read(), a.schema)
    else:
        schema = Schema(CRITEO_SCHEMA, "criteo")
    if any(role == "multihot" for _, role, _ in schema.columns):
        sys.exit("torch_reference: multihot columns are not supported")
    if max(schema.units) > 1 and a.model in ("deepfm", "dlrm", "wdl"):
        sys.exit(f"torch_reference: --model {a.model} needs one width for every slot")
    train_rows, eval_rows = read_rows(a.train, schema), read_rows(a.eval, schema)
    n_train = len(train_rows)
    if n_train == 0 or not eval_rows:
        sys.exit("torch_reference: train and eval data must both be non-empty")
    y, x, rows, num_rows = (torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                            for v in encode(train_rows + eval_rows, schema))
    del train_rows, eval_rows
    dev = torch.device(a.device)
    ytr, xtr, rtr = y[:n_train].to(dev), x[:n_train].to(dev), rows[:n_train].to(dev)
    yev_np, xev, rev = y[n_train:].numpy(), x[n_train:].to(dev), rows[n_train:].to(dev)
    print(f"parsed {n_train} train / {len(yev_np)} eval rows, {num_rows} embedding rows "
          f"in {time.perf_counter() - t0:.1f} s; threads {torch.get_num_threads()}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'default')}", flush=True)

    E = schema.unit_width or a.embedding_dim  # a schema's widths decide it, as in strata
    # wdl: each row holds the wide weight after the embedding, as strata's rows do.
    emb = nn.Embedding(num_rows, E + (1 if a.model == "wdl" else 0), padding_idx=0, sparse=True)
    with torch.no_grad():
        emb.weight.uniform_(-a.init_scale, a.init_scale)
        if a.sparse_optimizer == "ftrl":
            emb.weight.zero_()  # FTRL's weights are a function of z and n, both 0 at first
        emb.weight[0].zero_()
    slots, dense_width = rows.shape[1], x.shape[1]
    width = slots * E + dense_width
    bottom = None
    if a.model == "dlrm":  # the top MLP reads [z, the pairwise dots of z and the slots]
        bottom = relu_mlp([dense_width] + a.bottom_hidden + [E]) if dense_width else None
        vectors = slots + (1 if bottom else 0)
        width = (E if bottom else 0) + vectors * (vectors - 1) // 2
    mlp = relu_mlp([width] + a.hidden + [1])[:-1]  # no ReLU after the logit
    cross = CrossNet(rows.shape[1] * E + x.shape[1], a.cross_layers, a.cross_rank) if a.model == "dcn" else None
    dense = nn.ModuleList([mlp] + [m for m in (cross, bottom) if m is not None])
    emb.to(dev)
    dense.to(dev)

    def logits(rows, x, precision="fp32"):
        e = emb(rows)
        wide = None
        if a.model == "wdl":
            wide, e = e[:, :, E].sum(dim=1), e[:, :, :E]
        if a.model == "dlrm":
            h = dot_interaction(bottom(x) if bottom else None, e)
        else:
            h = torch.cat((e.reshape(len(rows), -1), x), dim=1)
        # strata's --dense-precision bf16: the MLP's products in bf16 (autocast), the
        # embeddings, weights and optimizer fp32; evaluation stays fp32.
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            z = mlp(cross(h) if cross else h)
        z = z.float().squeeze(1)
        if wide is not None:
            z = z + wide
        return z + fm_term(e) if a.model == "deepfm" else z

    if a.sparse_optimizer == "adagrad":
        opt_sparse = torch.optim.Adagrad(emb.parameters(), lr=a.lr_sparse, eps=0.0,
                                         initial_accumulator_value=a.adagrad_init)
    elif a.sparse_optimizer == "rowwise-adagrad":
        opt_sparse = rowwise_adagrad(torch, emb.weight, a.lr_sparse, a.adagrad_init)
    elif a.sparse_optimizer == "adam":
        opt_sparse = lazy_adam(torch, emb.weight, a.lr_sparse)
    elif a.sparse_optimizer == "ftrl":
        opt_sparse = ftrl(torch, emb.weight, a.lr_sparse, a.ftrl_l1, a.ftrl_l2, a.ftrl_beta)
    else:
        opt_sparse = torch.optim.SGD(emb.parameters(), lr=a.lr_sparse)
    if a.dense_optimizer == "adam":
        opt_dense = torch.optim.Adam(dense.parameters(), lr=a.lr_dense, betas=(0.9, 0.999), eps=1e-8)
    else:
        opt_dense = torch.optim.SGD(dense.parameters(), lr=a.lr_dense)
    loss_fn = nn.BCEWithLogitsLoss()

    n, B = len(ytr), a.batch_size
    start = time.perf_counter()
    for epoch in range(a.epochs):
        loss_sum = 0.0
        for i in range(0, n, B):
            opt_sparse.zero_grad(set_to_none=True)
            opt_dense.zero_grad(set_to_none=True)
            labels = ytr[i:i + B]
            loss = loss_fn(logits(rtr[i:i + B], xtr[i:i + B], a.dense_precision), labels)
            loss.backward()
            opt_sparse.step()
            opt_dense.step()
            loss_sum += loss.item() * len(labels)
        print(f"epoch {epoch + 1}: train logloss {loss_sum / n:.5f}, "
              f"{(epoch + 1) * n / (time.perf_counter() - start):.0f} examples/s", flush=True)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    seconds = time.perf_counter() - start
    examples_per_s = a.epochs * n / seconds

    with torch.no_grad():
        z = torch.cat([logits(rev[i:i + 65536], xev[i:i + 65536])
                       for i in range(0, len(yev_np), 65536)])
        eval_logloss = nn.functional.binary_cross_entropy_with_logits(
            z.double(), torch.from_numpy(yev_np).double().to(dev)).item()
    eval_auc = exact_auc(yev_np, z.double().cpu().numpy())
    print(f"trained {a.epochs * n} examples in {seconds:.2f} s; eval AUC {eval_auc:.5f}, "
          f"logloss {eval_logloss:.5f}")
    print(f"torch_reference: examples_per_s={examples_per_s:.1f} eval_auc={eval_auc:.6f} "
          f"eval_logloss={eval_logloss:.6f}")


def sparse_row_optimizer(torch, weight, lr, update):
    """An optimizer of an embedding table's touched rows: step() calls update(rows, values) with
    the rows the step's sparse gradient names and their gradients summed over the batch."""
    class RowOptimizer(torch.optim.Optimizer):
        def __init__(self):
            super().__init__([weight], {"lr": lr})

        @torch.no_grad()
        def step(self):
            if weight.grad is None:
                return
            g = weight.grad.coalesce()
            update(g.indices()[0], g.values())

    return RowOptimizer()


def rowwise_adagrad(torch, weight, lr, initial):
    """strata's row-wise Adagrad on an embedding table: one accumulator a row, s += mean(g^2)
    over the row, w -= lr * g / sqrt(s), on the rows the step touched (the sparse gradient's)."""
    sums = torch.full((weight.shape[0],), initial, dtype=weight.dtype, device=weight.device)

    def update(rows, values):
        sums[rows] += (values * values).mean(dim=1)
        weight[rows] -= lr * values / sums[rows].sqrt().unsqueeze(1)

    return sparse_row_optimizer(torch, weight, lr, update)


def lazy_adam(torch, weight, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """strata's lazy Adam on an embedding table: the rows a step touched move their moments
    and their own step count t, and w -= lr * m^ / (sqrt(v^) + eps), bias-corrected by t."""
    m, v = torch.zeros_like(weight), torch.zeros_like(weight)
    steps = torch.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device)

    def update(rows, values):
        steps[rows] += 1
        t = steps[rows].unsqueeze(1)
        m[rows] = beta1 * m[rows] + (1 - beta1) * values
        v[rows] = beta2 * v[rows] + (1 - beta2) * values * values
        m_hat = m[rows] / (1 - beta1 ** t)
        v_hat = v[rows] / (1 - beta2 ** t)
        weight[rows] -= lr * m_hat / (v_hat.sqrt() + eps)

    return sparse_row_optimizer(torch, weight, lr, update)


def ftrl(torch, weight, lr, l1, l2, beta):
    """strata's FTRL-proximal (McMahan et al., 2013) on an embedding table, per coordinate: with
    n' = n + g^2, z += g - (sqrt(n') - sqrt(n)) / lr * w, n = n'; then w = 0 where |z| <= l1, else
    -(z - sign(z) l1) / ((beta + sqrt(n)) / lr + l2), on the rows the step touched."""
    z_all, n_all = torch.zeros_like(weight), torch.zeros_like(weight)

    def update(rows, values):
        n_old = n_all[rows]
        n_new = n_old + values * values
        z = z_all[rows] + values - (n_new.sqrt() - n_old.sqrt()) / lr * weight[rows]
        z_all[rows] = z
        n_all[rows] = n_new
        w = -(z - torch.sign(z) * l1) / ((beta + n_new.sqrt()) / lr + l2)
        weight[rows] = torch.where(z.abs() <= l1, torch.zeros_like(w), w)

    return sparse_row_optimizer(torch, weight, lr, update)

if __name__ == "__main__":
    main()
