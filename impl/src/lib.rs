//! taintcheck-runtime: the reference runtime. It drives the sans-IO core of `taintcheck-model`
//! with real threads, channels and timers, and contains no eviction decision of its own.
