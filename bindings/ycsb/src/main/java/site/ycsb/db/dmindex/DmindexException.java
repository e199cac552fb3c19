package site.ycsb.db.dmindex;

/** A dmindex call that failed: the C API's code (dmindex_code_t) and its message. */
public final class DmindexException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int code;

  DmindexException(int code, String message) {
    super(message);
    this.code = code;
  }

  public int code() {
    return code;
  }
}
