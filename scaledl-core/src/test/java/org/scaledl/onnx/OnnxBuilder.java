package org.scaledl.onnx;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes small ONNX models in the protobuf wire format for tests (field numbers of the public onnx.proto). Dims are
 * numbers, or -1 for the symbolic {@code batch}.
 */
final class OnnxBuilder {
    private final List<byte[]> nodes = new ArrayList<>();
    private final List<byte[]> inputs = new ArrayList<>();
    private final List<byte[]> outputs = new ArrayList<>();
    private final List<byte[]> initializers = new ArrayList<>();
    private final List<byte[]> valueInfo = new ArrayList<>();
    private long opset = 13;
    private boolean writeOpset = true;

    /** The default-domain opset written (13 unless set). */
    OnnxBuilder opset(long value) {
        this.opset = value;
        return this;
    }

    /** Writes no opset_import at all. */
    OnnxBuilder noOpset() {
        this.writeOpset = false;
        return this;
    }

    /** A float tensor input; -1 dims are symbolic 'batch'. */
    OnnxBuilder input(String name, long... dims) {
        inputs.add(valueInfo(name, 1, dims));
        return this;
    }

    /** A float input whose dims are numbers or names ({@code "batch"}, {@code "seq"}; {@code "?"} is unnamed). */
    OnnxBuilder namedInput(String name, String... dims) {
        byte[] shape = msg(o -> {
            for (String d : dims) {
                byte[] dim = msg(x -> {
                    if (d.chars().allMatch(Character::isDigit)) {
                        x.writeInt64(1, Long.parseLong(d));
                    } else if (!d.equals("?")) {
                        x.writeString(2, d);
                    }
                });
                o.writeByteArray(1, dim);
            }
        });
        byte[] tensor = msg(o -> {
            o.writeInt32(1, 1);
            o.writeByteArray(2, shape);
        });
        byte[] type = msg(o -> o.writeByteArray(1, tensor));
        inputs.add(msg(o -> {
            o.writeString(1, name);
            o.writeByteArray(2, type);
        }));
        return this;
    }

    OnnxBuilder typedInput(String name, int elemType, long... dims) {
        inputs.add(valueInfo(name, elemType, dims));
        return this;
    }

    OnnxBuilder output(String name) {
        outputs.add(msg(o -> o.writeString(1, name)));
        return this;
    }

    OnnxBuilder valueInfo(String name, long... dims) {
        valueInfo.add(valueInfo(name, 1, dims));
        return this;
    }

    OnnxBuilder int64Initializer(String name, long... values) {
        initializers.add(msg(o -> {
            o.writeInt64(1, values.length);
            o.writeInt32(2, 7);
            o.writeString(8, name);
            for (long v : values) {
                o.writeInt64(7, v);
            }
        }));
        return this;
    }

    /** A FLOAT initializer of the given dims and values (packed float_data). */
    OnnxBuilder floatInitializer(String name, long[] dims, float... values) {
        initializers.add(msg(o -> {
            for (long d : dims) {
                o.writeInt64(1, d);
            }
            o.writeInt32(2, 1);
            o.writeString(8, name);
            for (float v : values) {
                o.writeFloat(4, v);
            }
        }));
        return this;
    }

    /** An initializer of any element type with raw little-endian bytes. */
    OnnxBuilder rawInitializer(String name, int dataType, long[] dims, byte[] raw) {
        initializers.add(msg(o -> {
            for (long d : dims) {
                o.writeInt64(1, d);
            }
            o.writeInt32(2, dataType);
            o.writeString(8, name);
            o.writeByteArray(9, raw);
        }));
        return this;
    }

    /**
     * An initializer whose data lies in another file, as onnx.save(..., save_as_external_data=True) writes it:
     * {@code external_data} entries (field 13) in the given order, and {@code data_location = EXTERNAL} (field 14)
     * when asked.
     */
    OnnxBuilder externalInitializer(String name, int dataType, long[] dims, boolean dataLocation,
            String... keyValues) {
        initializers.add(externalTensor(name, dataType, dims, dataLocation, keyValues));
        return this;
    }

    static byte[] externalTensor(String name, int dataType, long[] dims, boolean dataLocation,
            String... keyValues) {
        return msg(o -> {
            for (long d : dims) {
                o.writeInt64(1, d);
            }
            o.writeInt32(2, dataType);
            o.writeString(8, name);
            for (int i = 0; i + 1 < keyValues.length; i += 2) {
                String k = keyValues[i];
                String v = keyValues[i + 1];
                o.writeByteArray(13, msg(e -> {
                    e.writeString(1, k);
                    e.writeString(2, v);
                }));
            }
            if (dataLocation) {
                o.writeInt32(14, 1);
            }
        });
    }

    /** A tensor attribute holding the given TensorProto bytes. */
    static byte[] tensorAttr(String name, byte[] tensor) {
        return msg(o -> {
            o.writeString(1, name);
            o.writeByteArray(5, tensor);
            o.writeInt32(20, 4);
        });
    }

    static byte[] floats(String name, float... v) {
        return msg(o -> {
            o.writeString(1, name);
            for (float x : v) {
                o.writeFloat(7, x);
            }
            o.writeInt32(20, 6);
        });
    }

    /** A node; attributes are built with {@link #ints}, {@link #intAttr}, {@link #int64Tensor}, ... */
    OnnxBuilder node(String name, String op, List<String> in, List<String> out, byte[]... attrs) {
        nodes.add(msg(o -> {
            for (String i : in) {
                o.writeString(1, i);
            }
            for (String x : out) {
                o.writeString(2, x);
            }
            o.writeString(3, name);
            o.writeString(4, op);
            for (byte[] a : attrs) {
                o.writeByteArray(5, a);
            }
        }));
        return this;
    }

    static byte[] intAttr(String name, long v) {
        return msg(o -> {
            o.writeString(1, name);
            o.writeInt64(3, v);
            o.writeInt32(20, 2);
        });
    }

    static byte[] floatAttr(String name, float v) {
        return msg(o -> {
            o.writeString(1, name);
            o.writeFloat(2, v);
            o.writeInt32(20, 1);
        });
    }

    static byte[] stringAttr(String name, String v) {
        return msg(o -> {
            o.writeString(1, name);
            o.writeBytes(4, ByteString.copyFromUtf8(v));
            o.writeInt32(20, 3);
        });
    }

    static byte[] ints(String name, long... v) {
        return msg(o -> {
            o.writeString(1, name);
            for (long x : v) {
                o.writeInt64(8, x);
            }
            o.writeInt32(20, 7);
        });
    }

    /** A tensor attribute (named {@code value} for Constant) holding INT64 values with the given dims. */
    static byte[] int64Tensor(String name, long[] dims, long... values) {
        byte[] tensor = msg(o -> {
            for (long d : dims) {
                o.writeInt64(1, d);
            }
            o.writeInt32(2, 7);
            for (long v : values) {
                o.writeInt64(7, v);
            }
        });
        return msg(o -> {
            o.writeString(1, name);
            o.writeByteArray(5, tensor);
            o.writeInt32(20, 4);
        });
    }

    /** A tensor attribute with raw little-endian data and declared dims (which need not agree, for hostile tests). */
    static byte[] rawTensor(String name, int dataType, long[] dims, byte[] raw) {
        byte[] tensor = msg(o -> {
            for (long d : dims) {
                o.writeInt64(1, d);
            }
            o.writeInt32(2, dataType);
            o.writeByteArray(9, raw);
        });
        return msg(o -> {
            o.writeString(1, name);
            o.writeByteArray(5, tensor);
            o.writeInt32(20, 4);
        });
    }

    byte[] build() {
        byte[] graph = msg(o -> {
            for (byte[] n : nodes) {
                o.writeByteArray(1, n);
            }
            o.writeString(2, "test");
            for (byte[] t : initializers) {
                o.writeByteArray(5, t);
            }
            for (byte[] i : inputs) {
                o.writeByteArray(11, i);
            }
            for (byte[] x : outputs) {
                o.writeByteArray(12, x);
            }
            for (byte[] v : valueInfo) {
                o.writeByteArray(13, v);
            }
        });
        byte[] opsetId = msg(o -> o.writeInt64(2, opset));
        return msg(o -> {
            o.writeInt64(1, 8);
            o.writeByteArray(7, graph);
            if (writeOpset) {
                o.writeByteArray(8, opsetId);
            }
        });
    }

    private static byte[] valueInfo(String name, int elemType, long[] dims) {
        byte[] shape = msg(o -> {
            for (long d : dims) {
                byte[] dim = msg(x -> {
                    if (d < 0) {
                        x.writeString(2, "batch");
                    } else {
                        x.writeInt64(1, d);
                    }
                });
                o.writeByteArray(1, dim);
            }
        });
        byte[] tensor = msg(o -> {
            o.writeInt32(1, elemType);
            o.writeByteArray(2, shape);
        });
        byte[] type = msg(o -> o.writeByteArray(1, tensor));
        return msg(o -> {
            o.writeString(1, name);
            o.writeByteArray(2, type);
        });
    }

    interface Writer {
        void write(CodedOutputStream o) throws IOException;
    }

    static byte[] msg(Writer w) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            CodedOutputStream o = CodedOutputStream.newInstance(bytes);
            w.write(o);
            o.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
