/**
 * The model file format: versioned, checksummed JSON written atomically ({@link org.scaledl.model.file.SafeFiles}),
 * read with bounds. Open to the modules that write files of their own (the GNN stage).
 */
package org.scaledl.model.file;
