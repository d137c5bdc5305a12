/**
 * Runtime models: {@link org.scaledl.model.RuntimePredictor} (ScaleDL's layer-wise nonlinear model with
 * communication and overhead terms), the {@link org.scaledl.eval.Baselines baselines} it is compared with, and the
 * shared {@link org.scaledl.model.RuntimeTrainer}/{@link org.scaledl.model.RuntimeModel} contracts.
 */
package org.scaledl.model;
