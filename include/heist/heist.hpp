// heist: a work-stealing task scheduler. This header brings the whole public API.
#pragma once

#include "heist/executor.hpp"
#include "heist/executor_options.hpp"
#include "heist/future.hpp"
#include "heist/stats.hpp"
#include "heist/task_group.hpp"
