/**
 * Readers of measurement files: datasets ({@code runs.csv}, {@code passes.csv}, {@code machine.json} and the
 * graphs), device catalogs, kernel benchmark tables and collective measurements, all through the line-numbered
 * {@link org.scaledl.io.CsvTable}. Every problem is an {@link org.scaledl.InvalidInputException} naming the file and
 * line. Models never read files; these readers turn files into the values of {@link org.scaledl.workload}.
 */
package org.scaledl.io;
