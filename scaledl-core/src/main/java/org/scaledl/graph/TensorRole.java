package org.scaledl.graph;

/** What a named tensor of a {@link ModelGraph} is. */
public enum TensorRole {
    /** A data input fed per iteration (images, token ids); its shape usually carries the batch dimension. */
    INPUT,
    /** A trainable floating-point weight: counted in {@link ModelGraph#parameterCount()}, all-reduced in training. */
    PARAMETER,
    /** A stored but non-trainable weight (BatchNorm running statistics, integer index tables). */
    BUFFER,
    /** A value fixed in the graph itself ({@code Constant} nodes and their shape arithmetic). */
    CONSTANT,
    /** A tensor computed by a node from the data. */
    ACTIVATION
}
