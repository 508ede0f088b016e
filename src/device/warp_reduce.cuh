#pragma once
// Warp-level reduction through register shuffles: 5 steps for 32 lanes, no shared memory, no
// barrier (the article's V6 idea, reused by V7 and the production kernels).

namespace reducelab::device {

constexpr unsigned kFullWarpMask = 0xffffffffu;
constexpr int kWarpSize = 32;

// Shuffles for any trivially copyable value made of 4- or 8-byte words (float, double, int64,
// value/index pairs): `shuffle` moves one word, and the value goes word by word, so one helper
// serves every accumulator type.
template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_words(const T& value, Shuffle shuffle) {
  static_assert(sizeof(T) % 4 == 0, "shuffles move 4-byte words");
  constexpr int kWords = sizeof(T) / 4;
  unsigned words[kWords];
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = shuffle(words[w]);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

// Lane i gets lane (i + offset)'s value.
template <class T>
__device__ __forceinline__ T shfl_down(const T& value, int offset) {
  return shuffle_words(value,
                       [offset](unsigned w) { return __shfl_down_sync(kFullWarpMask, w, offset); });
}

// Lane i gets lane (i - offset)'s value (its own below `offset`).
template <class T>
__device__ __forceinline__ T shfl_up(const T& value, int offset) {
  return shuffle_words(value,
                       [offset](unsigned w) { return __shfl_up_sync(kFullWarpMask, w, offset); });
}

// Every lane gets lane `from`'s value.
template <class T>
__device__ __forceinline__ T shfl_from(const T& value, int from) {
  return shuffle_words(value, [from](unsigned w) { return __shfl_sync(kFullWarpMask, w, from); });
}

// Lane i gets lane (i ^ mask)'s value.
template <class T>
__device__ __forceinline__ T shfl_xor(const T& value, int mask) {
  return shuffle_words(value,
                       [mask](unsigned w) { return __shfl_xor_sync(kFullWarpMask, w, mask); });
}

// Butterfly over aligned teams of `team` lanes (a power of two up to 32): every lane of a team
// ends with the reduction of the team's values. All 32 lanes must call it.
template <class T, class Op>
__device__ __forceinline__ T team_reduce(T value, unsigned team, Op op) {
  for (unsigned mask = team / 2; mask > 0; mask /= 2) value = op(value, shfl_xor(value, mask));
  return value;
}

// Tree over the 32 lanes: lane 0 ends with the reduction of all lanes, in a fixed order.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) value = op(value, shfl_down(value, offset));
  return value;
}

}  // namespace reducelab::device
