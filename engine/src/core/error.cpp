#include "kiln/core/error.hpp"

namespace kiln {

std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::Shape: return "Shape";
    case ErrorCode::Rank: return "Rank";
    case ErrorCode::DType: return "DType";
    case ErrorCode::Index: return "Index";
    case ErrorCode::Value: return "Value";
    case ErrorCode::Config: return "Config";
    case ErrorCode::Device: return "Device";
    case ErrorCode::NonFinite: return "NonFinite";
    case ErrorCode::Format: return "Format";
    case ErrorCode::Limit: return "Limit";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::State: return "State";
    case ErrorCode::Disposed: return "Disposed";
    case ErrorCode::Type: return "Type";
    case ErrorCode::Io: return "Io";
    case ErrorCode::Busy: return "Busy";
  }
  return "Unknown";
}

}  // namespace kiln
