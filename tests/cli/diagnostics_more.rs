//! Tool output turned into diagnostics, by run and by `diagnostics parse`.
