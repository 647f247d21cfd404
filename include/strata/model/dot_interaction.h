// DLRM's dot interaction (Naumov et al., 2019), for --model dlrm. A row's vectors are the
// bottom MLP's output z (width d; absent when the input has no dense features) and the S
// pooled slot embeddings e_1..e_S (width d each), V of them in that order; its output row is
//   [z, <v_i, v_j> for i < j in (i, j) order]     (width d + V (V - 1) / 2, or without z)
// which feeds the top MLP. Every row is computed alone, in a fixed order, in fp32. Pure
// functions; thread-safe.
#pragma once

namespace strata {

struct DotInteraction {
  int slots = 0;        // S
  int dim = 0;          // d
  int input_width = 0;  // of an input row: S * d embeddings first, then the dense features
  bool bottom = false;  // z is present (the input has dense features)

  int vectors() const { return slots + (bottom ? 1 : 0); }
  int output_width() const { return (bottom ? dim : 0) + vectors() * (vectors() - 1) / 2; }

  // out (B, output_width) from the input rows (B, input_width) and z (B, d) (null without).
  void Forward(const float* input, const float* z, int B, float* out) const;
  // Given dout (B, output_width): adds d/de to dinput's embedding columns (B, input_width)
  // and writes d/dz to dz (B, d) when there is a z.
  void Backward(const float* input, const float* z, int B, const float* dout, float* dinput, float* dz) const;

 private:
  // Vector v of row i: z, then the slots.
  const float* Vector(const float* input, const float* z, int i, int v) const;
};

}  // namespace strata
