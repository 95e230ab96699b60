// Package recordfile reads the record files of the JSON stores and export
// files: one bounded read per file (MaxSize), relative to a held directory
// where the platform allows (ReadAt), and every failure a *store.ParseError
// that names the file, so a reader files it as a Broken record instead of
// failing the whole session. It is shared by pkg/store/jsonfs and
// pkg/store/export.
package recordfile
