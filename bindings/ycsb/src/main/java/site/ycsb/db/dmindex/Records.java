package site.ycsb.db.dmindex;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

/**
 * A YCSB record as one dmindex value: for each field, its name and its bytes, each as a 4-byte
 * big-endian length and the bytes (the fields in the order the map gives them). A record of
 * YCSB's defaults, 10 fields "field0".."field9" of 100 bytes, is 10 x (4 + 6 + 4 + 100) = 1140
 * bytes.
 */
final class Records {
  private Records() {}

  static byte[] encode(Map<String, ByteIterator> fields) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      for (Map.Entry<String, ByteIterator> field : fields.entrySet()) {
        byte[] name = field.getKey().getBytes(StandardCharsets.UTF_8);
        byte[] value = field.getValue().toArray();
        out.writeInt(name.length);
        out.write(name);
        out.writeInt(value.length);
        out.write(value);
      }
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory failed", e);  // a ByteArrayOutputStream does not
    }
    return bytes.toByteArray();
  }

  /**
   * Adds the record's fields named in `wanted` (all of them if null) to `out`, replacing fields of the
   * same name. Throws IllegalArgumentException for bytes that are not a record of this format.
   */
  static void decode(byte[] record, Set<String> wanted, Map<String, ByteIterator> out) {
    ByteBuffer in = ByteBuffer.wrap(record);
    while (in.hasRemaining()) {
      String name = new String(next(in), StandardCharsets.UTF_8);
      byte[] value = next(in);
      if (wanted == null || wanted.contains(name)) out.put(name, new ByteArrayByteIterator(value));
    }
  }

  private static byte[] next(ByteBuffer in) {
    if (in.remaining() < 4) throw new IllegalArgumentException("a record ends inside a length");
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("a record's field length " + length + " runs past its end");
    }
    byte[] bytes = new byte[length];
    in.get(bytes);
    return bytes;
  }
}
