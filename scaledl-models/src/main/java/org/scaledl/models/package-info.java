/** Ready-fitted predictors of the bundled datasets ({@link org.scaledl.models.BundledModels}). */
package org.scaledl.models;
