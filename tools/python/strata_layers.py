"""strata_layers: strata's model pieces above the pooled embeddings as torch modules, shared by
the checkpoint loader (strata_torch.py) and the PyTorch reference (tools/bench/torch_reference.py).

- fm_term(e): --model deepfm's factorization-machine term over the slots' pooled embeddings
  e [N, S, d]: 1/2 sum_k [(sum_s e_sk)^2 - sum_s e_sk^2] (include/strata/model/fm.h).
- CrossNet(width, layers, rank): --model dcn's DCN-v2 cross layers (include/strata/model/
  cross_net.h): x_{l+1} = x0 * (x_l W_l + b_l) + x_l, W_l [width, width] or U_l [width, rank]
  V_l [rank, width], matrices as strata stores them (x @ W, no transpose); Xavier-uniform init,
  zero biases, as strata's (from torch's generator, so not the same draws).
- relu_mlp(widths) and dot_interaction(z, e): --model dlrm's bottom MLP of the dense features
  and its dot interaction, whose output feeds the top MLP.
"""
import torch
from torch import nn


def fm_term(e):
    return 0.5 * (e.sum(dim=1).pow(2) - e.pow(2).sum(dim=1)).sum(dim=1)


class CrossNet(nn.Module):
    def __init__(self, width, layers, rank=0):
        super().__init__()
        self.rank = rank
        shapes = [(width, width)] if rank == 0 else [(width, rank), (rank, width)]
        self.mats = nn.ParameterList()
        self.biases = nn.ParameterList()
        for _ in range(layers):
            for rows, cols in shapes:
                bound = (6.0 / (rows + cols)) ** 0.5
                self.mats.append(nn.Parameter(torch.empty(rows, cols).uniform_(-bound, bound)))
            self.biases.append(nn.Parameter(torch.zeros(width)))

    def forward(self, x0):
        x, per = x0, 1 if self.rank == 0 else 2
        for l, b in enumerate(self.biases):
            y = x
            for m in self.mats[l * per:(l + 1) * per]:
                y = y @ m
            x = x0 * (y + b) + x
        return x

    def load(self, cross_group):
        """Copies /dense/cross/<l>/{weight | u, v, bias} of a checkpoint (h5py group)."""
        names = ["weight"] if self.rank == 0 else ["u", "v"]
        per = len(names)
        with torch.no_grad():
            for l, b in enumerate(self.biases):
                g = cross_group[str(l)]
                for j, name in enumerate(names):
                    self.mats[l * per + j].copy_(torch.from_numpy(g[name][...]))
                b.copy_(torch.from_numpy(g["bias"][...]))


def relu_mlp(widths):
    """DLRM's bottom MLP: Linear + ReLU for each step of widths (the last ReLU too), He-uniform
    weights and zero biases as strata's Mlp (torch's draws)."""
    layers = []
    for fan_in, fan_out in zip(widths, widths[1:]):
        lin = nn.Linear(fan_in, fan_out)
        bound = (6.0 / fan_in) ** 0.5
        with torch.no_grad():
            lin.weight.uniform_(-bound, bound)
            lin.bias.zero_()
        layers += [lin, nn.ReLU()]
    return nn.Sequential(*layers)


def dot_interaction(z, e):
    """--model dlrm's interaction (include/strata/model/dot_interaction.h): the vectors z [N, d]
    (None without dense features) and e [N, S, d]; returns [z, <v_i, v_j> for i < j]."""
    v = e if z is None else torch.cat((z.unsqueeze(1), e), dim=1)
    i, j = torch.triu_indices(v.shape[1], v.shape[1], offset=1)
    dots = torch.bmm(v, v.transpose(1, 2))[:, i, j]
    return dots if z is None else torch.cat((z, dots), dim=1)
