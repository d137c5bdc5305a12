package org.scaledl.graph;

import java.util.Objects;
import java.util.Optional;
import org.scaledl.Checks;

/**
 * A named tensor of a {@link ModelGraph}: its element type, its shape in terms of the batch size and its role.
 *
 * @param name  tensor name, unique within its graph
 * @param type  element type
 * @param shape shape, empty when it could not be inferred (only downstream of unsupported operators)
 * @param role  what the tensor is
 */
public record TensorInfo(String name, DataType type, Optional<SymbolicShape> shape, TensorRole role) {

    /** Validates the components. */
    public TensorInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(shape, "shape");
        Objects.requireNonNull(role, "role");
        Checks.argument(!name.isEmpty(), "tensor name must not be empty");
    }

    /** A tensor with a known shape. */
    public static TensorInfo of(String name, DataType type, SymbolicShape shape, TensorRole role) {
        return new TensorInfo(name, type, Optional.of(shape), role);
    }

    /** Bytes this tensor occupies for a batch size, 0 when its shape is unknown. */
    public long bytes(long batch) {
        return shape.map(s -> Math.multiplyExact(s.elements(batch), (long) type.byteSize())).orElse(0L);
    }

    /** Elements for a batch size, 0 when its shape is unknown. */
    public long elements(long batch) {
        return shape.map(s -> s.elements(batch)).orElse(0L);
    }
}
