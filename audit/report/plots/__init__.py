"""Figure functions: each takes tidy frames (and an optional ``ax``), returns the
matplotlib Figure or Axes, imports matplotlib lazily and never shows; the caller saves."""
