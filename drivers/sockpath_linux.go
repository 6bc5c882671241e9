package drivers

// MaxSocketPath is the longest Unix socket path this OS accepts:
// sizeof(sun_path), 108 on Linux, less the terminating NUL.
const MaxSocketPath = 107
