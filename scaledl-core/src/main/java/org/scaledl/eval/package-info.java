/**
 * Accuracy metrics ({@link org.scaledl.eval.ErrorMetrics}: MRE, RMSE, MAPE, share within ±10 %, Spearman) and
 * held-out evaluation of several methods on one split ({@link org.scaledl.eval.Evaluation}).
 */
package org.scaledl.eval;
