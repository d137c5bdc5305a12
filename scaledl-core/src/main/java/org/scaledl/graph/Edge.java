package org.scaledl.graph;

/**
 * A data dependency of a {@link ModelGraph}: layer {@code from} produces tensor {@code tensor} that layer {@code to}
 * consumes. Layer indices are positions in {@link ModelGraph#layers()} (topological order), so {@code from < to}.
 *
 * @param from   producing layer index
 * @param to     consuming layer index
 * @param tensor tensor name
 */
public record Edge(int from, int to, String tensor) {
}
