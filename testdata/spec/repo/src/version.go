package repo

// Version is the release this tree builds.
const Version = "1.4.2"
