// Package shapes knows every storage shape sessfix reads. It finds the
// user's stores (Discover: OpenCode's data dir and the home directory) or
// opens named paths (Open: a store, a data dir, a file, or a fixture tree
// holding stores at any depth), and opens a store's writer by its shape
// (OpenWriter).
//
// Each shape is one package under pkg/store that implements Shape, plus
// the interfaces saying where its stores are found (DirShape, FileShape,
// DataDirShape, HomeShape), and one line in Default. Nothing else here
// names a shape: the order of Default decides which shape wins a path, and
// which store of an OpenCode data dir is read and which are pre-migration
// copies. Modelled on restic's internal/backend/location.
package shapes
