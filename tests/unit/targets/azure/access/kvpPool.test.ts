import { describe, expect, it } from "vitest";
import { KVP_KEY_SIZE, KVP_POOL_3_PATHS, KVP_RECORD_SIZE, KVP_VALUE_SIZE, parseKvpPool, physicalHostFromPool } from "../../../../../src/targets/azure/access/kvpPool.ts";
import { AZURE_POOL_3, kvpRecord } from "../../../../fixtures/hyperv-kvp/pool.ts";

describe("parseKvpPool: the daemon's records (key 512 + value 2048 bytes, NUL-padded)", () => {
  it("the record is 2560 bytes, as sizeof(struct kvp_record) with the uapi header's sizes", () => {
    expect([KVP_KEY_SIZE, KVP_VALUE_SIZE, KVP_RECORD_SIZE]).toEqual([512, 2048, 2560]);
    expect(AZURE_POOL_3.length).toBe(11 * 2560);
  });

  it("reads every record in file order, stopping each string at its first NUL", () => {
    const pool = parseKvpPool(AZURE_POOL_3);
    expect(pool.trailingBytes).toBe(0);
    expect(pool.records).toHaveLength(11);
    expect(pool.records[0]).toEqual({ key: "HostName", value: "FRA052070811045" });
    expect(pool.records[6]).toEqual({ key: "PhysicalHostName", value: "FRA052070811045" });
    expect(pool.records.at(-1)).toEqual({ key: "VirtualMachineName", value: "dfc3f25e-632a-4fb6-8ec8-faece24dcc10" });
  });

  it("ignores what a shorter value left behind after its NUL", () => {
    const pool = parseKvpPool(kvpRecord("PhysicalHostName", "AMS1", "AMS0999999999"));
    expect(pool.records).toEqual([{ key: "PhysicalHostName", value: "AMS1" }]);
  });

  it("a value that fills its field without a NUL is read whole, and does not run into the next record", () => {
    const rec = Buffer.alloc(KVP_RECORD_SIZE, 0x41);
    rec.write("K\0", 0, "latin1");
    const pool = parseKvpPool(Buffer.concat([rec, kvpRecord("Next", "n")]));
    expect(pool.records[0]!.value).toBe("A".repeat(KVP_VALUE_SIZE));
    expect(pool.records[1]).toEqual({ key: "Next", value: "n" });
  });

  it("keeps UTF-8 (the kernel converts the host's UTF-16 to UTF-8)", () => {
    expect(parseKvpPool(kvpRecord("VirtualMachineName", "vm-é-λ")).records[0]!.value).toBe("vm-é-λ");
  });

  it("an empty file has no records; a truncated one keeps its whole records and counts the rest", () => {
    expect(parseKvpPool(new Uint8Array(0))).toEqual({ records: [], trailingBytes: 0 });
    const cut = AZURE_POOL_3.subarray(0, 7 * KVP_RECORD_SIZE + 100);
    const pool = parseKvpPool(cut);
    expect(pool.records.map((r) => r.key)).toEqual(["HostName", "HostingSystemEditionId", "HostingSystemNestedLevel", "HostingSystemOsMajor", "HostingSystemOsMinor", "HostingSystemProcessorArchitecture", "PhysicalHostName"]);
    expect(pool.trailingBytes).toBe(100);
    expect(parseKvpPool(AZURE_POOL_3.subarray(0, 10))).toEqual({ records: [], trailingBytes: 10 });
  });

  it("skips all-NUL records (no key)", () => {
    const pool = parseKvpPool(Buffer.concat([Buffer.alloc(KVP_RECORD_SIZE), kvpRecord("A", "1")]));
    expect(pool.records).toEqual([{ key: "A", value: "1" }]);
  });
});

describe("physicalHostFromPool: PhysicalHostName, or unavailable and why (never a guess)", () => {
  it("Azure's pool 3: the physical host name", () => {
    expect(physicalHostFromPool(AZURE_POOL_3)).toEqual({ physicalHost: "FRA052070811045", physicalHostSource: "kvp", physicalHostNote: null });
  });

  it("the record in any position, after other records", () => {
    const pool = Buffer.concat([kvpRecord("VirtualMachineName", "x"), kvpRecord("HostName", "H1"), kvpRecord("PhysicalHostName", "AMS07123")]);
    expect(physicalHostFromPool(pool).physicalHost).toBe("AMS07123");
  });

  it("does not take HostName, PhysicalHostNameFullyQualified or a key that merely starts the same", () => {
    const pool = Buffer.concat([kvpRecord("HostName", "H1"), kvpRecord("PhysicalHostNameFullyQualified", "h1.example"), kvpRecord("PhysicalHostNameX", "nope")]);
    expect(physicalHostFromPool(pool)).toEqual({ physicalHost: null, physicalHostSource: "unavailable", physicalHostNote: "/var/lib/hyperv/.kvp_pool_3 has no PhysicalHostName record" });
  });

  it("empty file, truncated before the record, a record cut in half: unavailable, with the reason", () => {
    expect(physicalHostFromPool(new Uint8Array(0))).toMatchObject({ physicalHost: null, physicalHostSource: "unavailable", physicalHostNote: "/var/lib/hyperv/.kvp_pool_3 is empty" });
    const before = physicalHostFromPool(AZURE_POOL_3.subarray(0, 3 * KVP_RECORD_SIZE));
    expect(before).toMatchObject({ physicalHost: null, physicalHostSource: "unavailable" });
    expect(before.physicalHostNote).toBe("/var/lib/hyperv/.kvp_pool_3 has no PhysicalHostName record");
    // The PhysicalHostName record is the 7th: cut inside its value, it is not a whole record.
    const half = physicalHostFromPool(AZURE_POOL_3.subarray(0, 6 * KVP_RECORD_SIZE + KVP_KEY_SIZE + 5), "/var/opt/hyperv/.kvp_pool_3");
    expect(half).toMatchObject({ physicalHost: null, physicalHostSource: "unavailable" });
    expect(half.physicalHostNote).toBe(`/var/opt/hyperv/.kvp_pool_3 has no PhysicalHostName record (${KVP_KEY_SIZE + 5} bytes after the last whole 2560-byte record)`);
  });

  it("two records that disagree, an empty value, a value that is not a host name: unavailable", () => {
    const two = physicalHostFromPool(Buffer.concat([kvpRecord("PhysicalHostName", "A1"), kvpRecord("PhysicalHostName", "B2")]));
    expect(two).toMatchObject({ physicalHost: null, physicalHostSource: "unavailable" });
    expect(two.physicalHostNote).toMatch(/2 different PhysicalHostName records/);
    // The same value twice is no conflict.
    expect(physicalHostFromPool(Buffer.concat([kvpRecord("PhysicalHostName", "A1"), kvpRecord("PhysicalHostName", "A1")])).physicalHost).toBe("A1");
    expect(physicalHostFromPool(kvpRecord("PhysicalHostName", "")).physicalHostSource).toBe("unavailable");
    const odd = physicalHostFromPool(kvpRecord("PhysicalHostName", 'a"b\nc'));
    expect(odd).toMatchObject({ physicalHost: null, physicalHostSource: "unavailable" });
    expect(odd.physicalHostNote).toMatch(/not a host name/);
  });

  it("a pool that is not one (random bytes) gives no name", () => {
    const junk = Buffer.alloc(3 * KVP_RECORD_SIZE + 7);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 131 + 7) % 251;
    expect(physicalHostFromPool(junk).physicalHostSource).toBe("unavailable");
  });

  it("looks in /var/lib/hyperv first, then the older /var/opt/hyperv", () => {
    expect(KVP_POOL_3_PATHS).toEqual(["/var/lib/hyperv/.kvp_pool_3", "/var/opt/hyperv/.kvp_pool_3"]);
  });
});
