/**
 * Hardware as data: {@link org.scaledl.hardware.Device} describes an accelerator by its data-sheet figures (peak
 * FLOP/s, memory bandwidth, compute units, L2), and {@link org.scaledl.hardware.DeviceCatalog} reads such
 * descriptions from CSV. Models that take a device predict for hardware they were not fitted on.
 */
package org.scaledl.hardware;
