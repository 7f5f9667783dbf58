// Moving named tensors between NumPy files on the host and the device layout
// in simulated device memory (docs/hardware.md#device-layout: stick blocks of
// the last host dim outermost, zero padding).
#pragma once

#include "isa/Program.h"
#include "sim/core/DeviceMemory.h"
#include "support/HostMemory.h"
#include "support/Npy.h"

#include <string>
#include <vector>

namespace spyre::sim {

/// Converts host values (FP32 or FP16 on disk, or INT8/INT32 for integer
/// tensors) to the tensor's device format and writes them, padding
/// included, into device memory. A wrong shape or dtype is a UserError
/// naming `fileName`, the tensor, and both shapes or dtypes.
void writeTensor(const isa::TensorDecl &tensor, const NpyArray &host,
                 const std::string &fileName, DeviceMemory &memory);

/// Reads a tensor back from device memory into host order: FP32 for DL16 and
/// FP32 tensors, INT8/INT32 for integer ones.
NpyArray readTensor(const isa::TensorDecl &tensor, const DeviceMemory &memory);

/// A float (DL16 or FP32) tensor's elements in host order, exactly.
std::vector<double> readTensorValues(const isa::TensorDecl &tensor,
                                     const DeviceMemory &memory);

/// Writes host-order values into a float tensor: each is rounded to FP32
/// (nearest, ties to even) and, for DL16, on to DL16 as the SFU rounds its
/// results; padding lanes are zero.
void writeTensorValues(const isa::TensorDecl &tensor,
                       const std::vector<double> &values, DeviceMemory &memory);

/// Host memory a run with numerics takes for the program's tensors: the
/// device pages of every tensor but scratch (device memory is allocated as
/// it is written), and for inputs and outputs their host arrays and the staging
/// copy on the way. An estimate to refuse a run before it allocates.
HostMemoryEstimate numericsMemory(const isa::Program &program);

/// `dir/NAME.npy`, the file of an input or output tensor. Its name was
/// checked when the program was read (isa::tensorNameProblem), so it is a
/// plain file name and the path stays in `dir`.
std::string tensorFilePath(const std::string &dir, const isa::TensorDecl &tensor);

/// Loads every input tensor of `program` from `dir/NAME.npy`. A missing
/// input, or a `.npy` file in `dir` that names no input, is a UserError (a
/// misnamed file is almost always a mistake); errors about the inputs as a
/// whole point at `programFile`.
void loadInputs(const isa::Program &program, const std::string &dir,
                const std::string &programFile, DeviceMemory &memory);

/// Writes every output tensor to `dir/NAME.npy` (creating `dir`).
void saveOutputs(const isa::Program &program, const std::string &dir,
                 const DeviceMemory &memory);

} // namespace spyre::sim
