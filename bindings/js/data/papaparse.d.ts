// papaparse ships no types and @types/papaparse is not a dependency: csv.ts declares the
// little it uses (its own Papa interface) and casts the module to it.
declare module 'papaparse';
