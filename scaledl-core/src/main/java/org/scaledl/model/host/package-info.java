/**
 * The host (CPU) layer cost stage: ScaleDL's layer-wise basis per operator family, fitted on whole-iteration times of
 * a machine, with few-shot adaptation to machines it has not seen. Internal to the core module.
 */
package org.scaledl.model.host;
