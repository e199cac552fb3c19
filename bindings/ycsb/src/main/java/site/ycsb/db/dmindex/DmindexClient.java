package site.ycsb.db.dmindex;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB's DB over dmindex (docs/YCSB_BINDING.md). One cluster connection and one index per YCSB
 * table are shared by the client's threads; each thread (each DB instance) has its own session.
 *
 * <p>Properties: dmindex.design (sherman), dmindex.options ("node_bytes=4096,cache_bytes=..."),
 * dmindex.knobs ("hocl=off,..."), dmindex.memservers ("HOST:PORT,HOST:PORT"; none: an embedded
 * cluster in this process), dmindex.transport (shm), dmindex.cluster_key, dmindex.preload.
 *
 * <p>Keys are YCSB's key strings as bytes (the bytes key format: string order). A record is
 * one value (Records). An update reads the record and writes it back with the new fields, as
 * YCSB's update only names the fields it changes.
 */
public class DmindexClient extends DB {
  /** What the client's threads share: the cluster and the open indexes, and who uses them. */
  private static final Object LOCK = new Object();
  private static long cluster;
  private static final Map<String, Long> INDEXES = new HashMap<>();
  private static int users;
  /** Operations of every thread, preloaded records included: the divisor of the verb counts. */
  private static final java.util.concurrent.atomic.AtomicLong OPERATIONS = new java.util.concurrent.atomic.AtomicLong();

  private final Map<String, Long> sessions = new HashMap<>();

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    synchronized (LOCK) {
      try {
        if (++users == 1) {
          cluster = DmindexNative.openCluster(p.getProperty("dmindex.memservers", ""),
              p.getProperty("dmindex.transport", "shm"), p.getProperty("dmindex.cluster_key", ""));
        }
        // Open the workload's table now, so that a bad design, option or knob stops the client here
        // with dmindex's message instead of failing every operation.
        session(p.getProperty(CoreWorkload.TABLENAME_PROPERTY, CoreWorkload.TABLENAME_PROPERTY_DEFAULT));
        if (users == 1 && shouldPreload(p)) {
          preload(p);
        }
      } catch (DmindexException e) {
        release(false);  // YCSB does not clean up a DB whose init failed
        throw new DBException("dmindex: " + e.getMessage(), e);
      } catch (DBException e) {
        release(false);
        throw e;
      }
    }
  }

  /**
   * An embedded cluster lives in this process, so a run phase (-t) starts from an empty index:
   * unless dmindex.preload=false, the first thread first inserts the records a load phase would,
   * with YCSB's own load code (CoreWorkload.doInsert of a workload made from the same properties),
   * unmeasured but inside YCSB's timed window. Memory servers keep the load of an earlier -load run.
   */
  private static boolean shouldPreload(Properties p) {
    boolean embedded = p.getProperty("dmindex.memservers", "").isEmpty();
    boolean transactions = Boolean.parseBoolean(p.getProperty("dotransactions", "true"));
    return embedded && transactions && Boolean.parseBoolean(p.getProperty("dmindex.preload", "true"));
  }

  private void preload(Properties p) throws DBException {
    CoreWorkload load = new CoreWorkload();
    Properties loadProperties = new Properties();
    loadProperties.putAll(p);
    loadProperties.setProperty("dotransactions", "false");
    try {
      load.init(loadProperties);
    } catch (site.ycsb.WorkloadException e) {
      throw new DBException("dmindex.preload: " + e.getMessage(), e);
    }
    long start = Long.parseLong(p.getProperty(CoreWorkload.INSERT_START_PROPERTY, "0"));
    long records = Long.parseLong(p.getProperty(CoreWorkload.INSERT_COUNT_PROPERTY,
        String.valueOf(Long.parseLong(p.getProperty("recordcount", "0")) - start)));
    for (long i = 0; i < records; ++i) {
      if (!load.doInsert(this, null)) {
        throw new DBException("dmindex.preload: inserting record " + (start + i) + " failed");
      }
    }
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      try {
        release(true);
      } catch (DmindexException e) {
        throw new DBException("dmindex: " + e.getMessage(), e);
      }
    }
  }

  /**
   * Closes this thread's sessions; the last user closes the indexes, reports the verbs (if
   * `report`) and lets the cluster go. Under LOCK.
   */
  private void release(boolean report) {
    try {
      for (long session : sessions.values()) {
        DmindexNative.closeSession(session);
      }
    } finally {
      sessions.clear();
      if (--users == 0) {
        try {
          for (long index : INDEXES.values()) {
            DmindexNative.closeIndex(index);
          }
          if (report) {
            reportVerbs();
          }
        } finally {
          INDEXES.clear();
          if (cluster != 0) {
            DmindexNative.destroyCluster(cluster);
          }
          cluster = 0;
        }
      }
    }
  }

  /**
   * The exact verb counts of this client's cluster connection per YCSB operation, on stderr
   * beside YCSB's report: what `dmindex bench` reports as RTT/op and bytes/op. They include
   * opening the index and, embedded, the preload (counted as operations too).
   */
  private static void reportVerbs() {
    long[] c = DmindexNative.clusterCounters(cluster);
    long ops = Math.max(1, OPERATIONS.get());
    System.err.printf("dmindex: %d operations: %.2f round trips/op, %.2f READ/op, %.2f WRITE/op, %.2f atomic/op, "
        + "%.2f RPC/op, %.0f bytes/op%n", OPERATIONS.get(), (double) c[4] / ops, (double) c[0] / ops,
        (double) c[1] / ops, (double) c[2] / ops, (double) c[3] / ops, (double) c[5] / ops);
  }

  /** The session of an operation on `table`, counted. */
  private long operationOn(String table) {
    OPERATIONS.incrementAndGet();
    return session(table);
  }

  /** This thread's session on the index of `table` (opened on first use). */
  private long session(String table) {
    Long session = sessions.get(table);
    if (session != null) {
      return session;
    }
    long index;
    synchronized (LOCK) {
      Long open = INDEXES.get(table);
      index = open != null ? open : openIndex(table);
      INDEXES.put(table, index);
    }
    long opened = DmindexNative.openSession(index);
    sessions.put(table, opened);
    return opened;
  }

  private long openIndex(String table) {
    Properties p = getProperties();
    List<String[]> options = new ArrayList<>();
    // YCSB's keys are strings: byte keys in string order. Nodes of 4 KiB hold keys of up to 64
    // bytes ("user" and up to 20 digits, or zero-padded) with 128-byte inline values.
    options.add(new String[] {"design", p.getProperty("dmindex.design", "sherman")});
    options.add(new String[] {"name", table});
    options.add(new String[] {"key_format", "bytes"});
    options.add(new String[] {"max_key_bytes", "64"});
    options.add(new String[] {"node_bytes", "4096"});
    options.addAll(pairs("dmindex.options", p.getProperty("dmindex.options", "")));
    List<String[]> knobs = pairs("dmindex.knobs", p.getProperty("dmindex.knobs", ""));
    return DmindexNative.openIndex(cluster, column(options, 0), column(options, 1), column(knobs, 0),
        column(knobs, 1));
  }

  /** "a=1,b=2" as {a,1}, {b,2}. */
  private static List<String[]> pairs(String property, String text) {
    List<String[]> out = new ArrayList<>();
    for (String item : text.split(",")) {
      if (item.isBlank()) {
        continue;
      }
      int eq = item.indexOf('=');
      if (eq <= 0) {
        throw new DmindexException(2, property + ": '" + item + "' is not name=value");
      }
      out.add(new String[] {item.substring(0, eq).trim(), item.substring(eq + 1).trim()});
    }
    return out;
  }

  private static String[] column(List<String[]> rows, int i) {
    String[] out = new String[rows.size()];
    for (int r = 0; r < rows.size(); ++r) {
      out[r] = rows.get(r)[i];
    }
    return out;
  }

  private static byte[] bytes(String key) {
    return key.getBytes(StandardCharsets.UTF_8);
  }

  /** A failed call as YCSB's status, reported once on stderr with dmindex's message. */
  private static Status failed(String op, DmindexException e) {
    System.err.println("dmindex " + op + ": " + e.getMessage());
    return e.code() == 2 ? Status.BAD_REQUEST : e.code() == 3 ? Status.SERVICE_UNAVAILABLE : Status.ERROR;
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      byte[] record = DmindexNative.get(operationOn(table), bytes(key));
      if (record == null) {
        return Status.NOT_FOUND;
      }
      Records.decode(record, fields, result);
      return Status.OK;
    } catch (DmindexException e) {
      return failed("read", e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try {
      byte[][] pairs = DmindexNative.scan(operationOn(table), bytes(startkey), recordcount);
      for (int i = 1; i < pairs.length; i += 2) {
        HashMap<String, ByteIterator> record = new HashMap<>();
        Records.decode(pairs[i], fields, record);
        result.add(record);
      }
      return Status.OK;
    } catch (DmindexException e) {
      return failed("scan", e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      long session = operationOn(table);
      byte[] old = DmindexNative.get(session, bytes(key));
      if (old == null) {
        return Status.NOT_FOUND;
      }
      Map<String, ByteIterator> record = new HashMap<>();
      Records.decode(old, null, record);
      record.putAll(values);
      DmindexNative.put(session, bytes(key), Records.encode(record));
      return Status.OK;
    } catch (DmindexException e) {
      return failed("update", e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      DmindexNative.put(operationOn(table), bytes(key), Records.encode(values));
      return Status.OK;
    } catch (DmindexException e) {
      return failed("insert", e);
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      return DmindexNative.delete(operationOn(table), bytes(key)) ? Status.OK : Status.NOT_FOUND;
    } catch (DmindexException e) {
      return failed("delete", e);
    }
  }
}
