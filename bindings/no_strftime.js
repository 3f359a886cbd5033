// Emscripten JS library (linked with --js-library by CMakeLists.txt into every engine build):
// strftime / strftime_l that throw, in place of Emscripten's (library.js: ~7.5 KB of the glue
// kiln*.mjs, 2.0 KB gzip -9). Kiln never formats a time: the only caller is libc++'s
// std::locale (locale.o: time_put<char>::do_put, time_get_byname's name tables), which the
// engine links for std::regex (engine/src/record/load_options.cpp) and the iostreams
// (engine/src/core/io.cpp) but whose time facets nothing uses (no std::put_time, no named
// locale). Should one ever be reached, the throw leaves wasm as a JS Error and the boundary
// (bindings/js/boundary.ts) reports it as KilnError `Internal` naming the entry point.
mergeInto(LibraryManager.library, {
  strftime__deps: [],
  strftime: function() {
    throw new Error('kiln: strftime is not in this engine build (bindings/no_strftime.js)');
  },
  strftime_l__deps: [],
  strftime_l: function() {
    throw new Error('kiln: strftime is not in this engine build (bindings/no_strftime.js)');
  },
});
