// Emscripten JS library (linked with --js-library by CMakeLists.txt into every engine build, as
// no_strftime.js): two parts of Embind's glue (Emscripten 3.1.6, src/embind/embind.js) that no
// Kiln binding can reach, replaced so that the glue kiln*.mjs leaves out what they pull in
// (issue 17: what a page downloads; ~2 KB of minified glue, 0.8 KB gzip -9, per engine).
//  - Wide strings: libembind registers std::wstring, std::u16string and std::u32string with every
//    module; their registration pulls the UTF-16 and UTF-32 converters. Kiln's strings cross as
//    std::string (UTF-8). The registration here registers nothing: a binding that used a wide
//    string would be reported by Embind as unbound ("Cannot call ... due to unbound types") at
//    its first call, never convert wrongly.
//  - Smart-pointer and derived-class arguments: Embind chooses genericPointerToWireType only for
//    a class_ with a base<> or a smart_ptr; Kiln's classes (RawTensor, RawModel, ...) have
//    neither, so their arguments go through the raw-pointer converters, which stay.
mergeInto(LibraryManager.library, {
  _embind_register_std_wstring__deps: [],
  _embind_register_std_wstring: function(rawType, charSize, name) {},
  $genericPointerToWireType__deps: [],
  $genericPointerToWireType: function() {
    throw new Error('kiln: Embind smart-pointer arguments are not in this engine build (bindings/embind_trim.js)');
  },
});
