package org.scaledl.graph;

import java.util.Optional;

/**
 * Element types of tensors, numbered as ONNX's {@code TensorProto.DataType}. {@link #byteSize()} is what one element
 * occupies in memory (sub-byte types round up to one byte).
 */
public enum DataType {
    UNDEFINED(0, 0), FLOAT(1, 4), UINT8(2, 1), INT8(3, 1), UINT16(4, 2), INT16(5, 2), INT32(6, 4), INT64(7, 8),
    STRING(8, 8), BOOL(9, 1), FLOAT16(10, 2), DOUBLE(11, 8), UINT32(12, 4), UINT64(13, 8), COMPLEX64(14, 8),
    COMPLEX128(15, 16), BFLOAT16(16, 2), FLOAT8E4M3FN(17, 1), FLOAT8E4M3FNUZ(18, 1), FLOAT8E5M2(19, 1),
    FLOAT8E5M2FNUZ(20, 1), UINT4(21, 1), INT4(22, 1);

    private static final DataType[] BY_CODE = values();

    private final int onnxCode;
    private final int byteSize;

    DataType(int onnxCode, int byteSize) {
        this.onnxCode = onnxCode;
        this.byteSize = byteSize;
    }

    /** The ONNX {@code TensorProto.DataType} number. */
    public int onnxCode() {
        return onnxCode;
    }

    /** Bytes per element (sub-byte types count as one byte). */
    public int byteSize() {
        return byteSize;
    }

    /** True for floating-point types, the only ones that can hold trainable parameters. */
    public boolean isFloating() {
        return switch (this) {
            case FLOAT, FLOAT16, DOUBLE, BFLOAT16, FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ -> true;
            default -> false;
        };
    }

    /** True for integer and boolean types, whose small values (shapes, indices) the importer tracks. */
    public boolean isIntegral() {
        return switch (this) {
            case UINT8, INT8, UINT16, INT16, INT32, INT64, BOOL, UINT32, UINT64, UINT4, INT4 -> true;
            default -> false;
        };
    }

    /** The type with this ONNX code, if ONNX defines one. */
    public static Optional<DataType> fromOnnx(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            return Optional.empty();
        }
        return Optional.of(BY_CODE[code]);
    }
}
