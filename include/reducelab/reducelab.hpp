#pragma once
//! \file reducelab.hpp
//! Umbrella header: everything a user of reducelab needs.

#include "reducelab/dtype.hpp"
#include "reducelab/error.hpp"
#include "reducelab/op.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/reproducible.hpp"
#include "reducelab/axis.hpp"
#include "reducelab/segmented.hpp"
#include "reducelab/shard.hpp"
#include "reducelab/tensors.hpp"
#include "reducelab/types.hpp"
#include "reducelab/version.hpp"
