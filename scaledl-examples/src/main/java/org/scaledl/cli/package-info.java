/**
 * The {@code scaledl} command line: one picocli command per task (predict, layouts, scaling, fit, plan, runs,
 * evaluate-*, bench, ...), each a thin layer over the library's API; errors are one line naming the file, line or
 * option.
 */
package org.scaledl.cli;
