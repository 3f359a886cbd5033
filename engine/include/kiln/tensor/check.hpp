#pragma once
/// Kept for compatibility: the argument checks moved to core (kiln/core/check.hpp) so that
/// the backends need not include the front end. Include that header in new code.
#include "kiln/core/check.hpp"
