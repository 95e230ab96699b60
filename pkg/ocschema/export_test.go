package ocschema

// The fast path and the full check, for the differential tests.
var (
	FitsStrict = fits
	FullCheck  = check
)
