// Put first on the include path of the public-header check (CMakeLists.txt,
// kiln_public_headers_check): a public header that includes the JSON library fails to build.
#error "a header under engine/include/kiln includes nlohmann-json; keep JSON in engine/src (config::Value, engine/src/config/json.cpp) or the interop header engine/interop/kiln/config/json_interop.hpp"
