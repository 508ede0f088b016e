#pragma once
// What we know about the GPU: its identity for the results files, and the theoretical memory
// bandwidth every "% of peak" figure is measured against.

#include <cstddef>
#include <string>

namespace reducelab {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t total_memory = 0;
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  double peak_gbps = 0;        //!< theoretical: memory clock x bus width x 2 (DDR)
  std::string driver;          //!< e.g. "580.159.04" (NVML), or the CUDA driver API version
  std::string cuda_driver;     //!< CUDA version the driver supports, e.g. "13.0"
  std::string cuda_runtime;    //!< CUDA runtime linked into this program, e.g. "13.0"
};

//! Theoretical DRAM bandwidth in GB/s (1e9 bytes/s): clock (kHz) x 1e3 x bus bytes x 2 (two
//! transfers per clock). For the H200: 3,201,000 kHz x 6016 bit -> 4,814 GB/s.
constexpr double theoretical_peak_gbps(int memory_clock_khz, int bus_width_bits) {
  return static_cast<double>(memory_clock_khz) * 1e3 * (bus_width_bits / 8.0) * 2.0 / 1e9;
}

//! "13.0" from 13000.
std::string format_cuda_version(int version);

//! Queries GPU `ordinal`. Throws reducelab::Error (ErrorCode::no_device) with one clear line when
//! there is no driver or no such device.
DeviceInfo query_device(int ordinal);

//! Number of CUDA devices, or 0 with `reason` set when there is no driver or no device.
int cuda_device_count(std::string* reason = nullptr);

}  // namespace reducelab
