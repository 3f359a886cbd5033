#pragma once
/// Preprocessor helpers for the registration macros (KILN_CONFIG, KILN_MODULE): a FOR_EACH
/// over up to 256 arguments with C++20's __VA_OPT__ (the recursion trick of David Mazières,
/// "Recursive macros with C++20 __VA_OPT__").

#define KILN_PP_PARENS ()
#define KILN_PP_EXPAND(...) KILN_PP_EXPAND3(KILN_PP_EXPAND3(KILN_PP_EXPAND3(KILN_PP_EXPAND3(__VA_ARGS__))))
#define KILN_PP_EXPAND3(...) KILN_PP_EXPAND2(KILN_PP_EXPAND2(KILN_PP_EXPAND2(KILN_PP_EXPAND2(__VA_ARGS__))))
#define KILN_PP_EXPAND2(...) KILN_PP_EXPAND1(KILN_PP_EXPAND1(KILN_PP_EXPAND1(KILN_PP_EXPAND1(__VA_ARGS__))))
#define KILN_PP_EXPAND1(...) __VA_ARGS__

/// `m(ctx, a)` for each argument a, juxtaposed.
#define KILN_FOR_EACH(m, ctx, ...) \
  __VA_OPT__(KILN_PP_EXPAND(KILN_PP_FOR_EACH_HELPER(m, ctx, __VA_ARGS__)))
#define KILN_PP_FOR_EACH_HELPER(m, ctx, a, ...) \
  m(ctx, a) __VA_OPT__(KILN_PP_FOR_EACH_AGAIN KILN_PP_PARENS(m, ctx, __VA_ARGS__))
#define KILN_PP_FOR_EACH_AGAIN() KILN_PP_FOR_EACH_HELPER

/// `m(ctx, a)` for each argument a, separated by commas.
#define KILN_FOR_EACH_LIST(m, ctx, ...) \
  __VA_OPT__(KILN_PP_EXPAND(KILN_PP_FOR_EACH_LIST_HELPER(m, ctx, __VA_ARGS__)))
#define KILN_PP_FOR_EACH_LIST_HELPER(m, ctx, a, ...) \
  m(ctx, a) __VA_OPT__(, KILN_PP_FOR_EACH_LIST_AGAIN KILN_PP_PARENS(m, ctx, __VA_ARGS__))
#define KILN_PP_FOR_EACH_LIST_AGAIN() KILN_PP_FOR_EACH_LIST_HELPER

/// Removes one pair of parentheses: KILN_UNPAREN (a, b) -> a, b.
#define KILN_UNPAREN(...) __VA_ARGS__
