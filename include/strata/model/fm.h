// The factorization machine's second-order term of --model deepfm (Guo et al., DeepFM), over
// the pooled embeddings e_s (S slots of width d) at the front of each MLP input row:
//   fm = 1/2 sum_k [ (sum_s e_sk)^2 - sum_s e_sk^2 ]     (O(S d), the sum-square form)
//   d fm / d e_sk = sum_s' e_s'k - e_sk
// Every row is computed alone, in slot order, in fp32, so the term is the same bits on any
// topology and batch split. Pure functions; thread-safe.
#pragma once

namespace strata {

// logits[i] += fm(row i) for i < B; rows of `width` floats, the embeddings first.
void AddFmTerm(const float* input, int B, int width, int slots, int dim, float* logits);

// dinput[i, embeddings] += dlogits[i] * d fm / d e for i < B.
void AddFmGradient(const float* input, int B, int width, int slots, int dim, const float* dlogits,
                   float* dinput);

}  // namespace strata
