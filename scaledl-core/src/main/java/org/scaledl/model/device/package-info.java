/**
 * The device (GPU) layer cost stage: per-layer times from the roofline of the device's description scaled by
 * gradient-boosted efficiencies per operator family ({@link org.scaledl.model.device.DeviceLayerModel}), composed
 * with collectives and the Megatron execution in {@link org.scaledl.model.device.DeviceStage}.
 */
package org.scaledl.model.device;
