/**
 * The class `java` starts DynamoDB Local through, so that the engine listens on loopback only.
 *
 * Amazon's jar has no option for its listen address: its server (DynamoDBProxyServer) makes a
 * Jetty `Server(port)`, whose one connector binds every interface, and nothing (an option, a
 * system property, the JVM's own settings) changes the wildcard address Java binds. So the engine
 * is started by this class instead of the jar's own main: it builds the server from the same
 * command line, sets the connector's host to loopback before anything is bound, and starts it.
 * In Java:
 *
 *   public class LoopbackDynamoDBLocal {
 *     public static void main(String[] args) throws Exception {
 *       DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
 *       Field field = DynamoDBProxyServer.class.getDeclaredField("server");
 *       field.setAccessible(true);
 *       ((ServerConnector) ((Server) field.get(proxy)).getConnectors()[0]).setHost(HOST);
 *       proxy.start();
 *     }
 *   }
 *
 * It is written here as class-file bytes, not compiled: a JRE (Temurin's, for one) has no
 * compiler, and no binary is kept in the repository. The code is straight-line, so the class
 * needs no stack map frames. Should a later jar rename the field, the engine stops at once with
 * `NoSuchFieldException: server` and `npm start` reports it: it never listens on every interface.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const LAUNCHER_CLASS = 'LoopbackDynamoDBLocal';

const PROXY_SERVER = 'software/amazon/dynamodb/services/local/server/DynamoDBProxyServer';
const SERVER_RUNNER = 'software/amazon/dynamodb/services/local/main/ServerRunner';
const JETTY_SERVER = 'org/eclipse/jetty/server/Server';
const JETTY_CONNECTOR = 'org/eclipse/jetty/server/ServerConnector';

/** A class file's constant pool: each entry added once, numbered from 1. */
class ConstantPool {
  private readonly entries: Buffer[] = [];
  private readonly indexes = new Map<string, number>();

  private add(key: string, bytes: Buffer): number {
    let index = this.indexes.get(key);
    if (index === undefined) {
      this.entries.push(bytes);
      index = this.entries.length;
      this.indexes.set(key, index);
    }
    return index;
  }

  utf8(text: string): number {
    const bytes = Buffer.from(text, 'utf8');
    return this.add(`utf8:${text}`, Buffer.concat([Buffer.from([1]), u2(bytes.length), bytes]));
  }
  class(name: string): number {
    return this.add(`class:${name}`, Buffer.concat([Buffer.from([7]), u2(this.utf8(name))]));
  }
  string(text: string): number {
    return this.add(`string:${text}`, Buffer.concat([Buffer.from([8]), u2(this.utf8(text))]));
  }
  method(owner: string, name: string, descriptor: string): number {
    const nameAndType = this.add(`nat:${name}${descriptor}`, Buffer.concat([Buffer.from([12]), u2(this.utf8(name)), u2(this.utf8(descriptor))]));
    return this.add(`method:${owner}.${name}${descriptor}`, Buffer.concat([Buffer.from([10]), u2(this.class(owner)), u2(nameAndType)]));
  }

  bytes(): Buffer {
    return Buffer.concat([u2(this.entries.length + 1), ...this.entries]);
  }
}

function u2(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

function u4(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

// The JVM instructions used (JVM specification, chapter 6).
const op = { aload_0: 0x2a, aload_1: 0x2b, astore_1: 0x4c, iconst_0: 0x03, iconst_1: 0x04, ldc_w: 0x13, dup: 0x59, aaload: 0x32, invokevirtual: 0xb6, invokestatic: 0xb8, checkcast: 0xc0, return: 0xb1 };

/** The class file of LAUNCHER_CLASS, binding the engine to `host`. */
export function launcherClass(host: string): Buffer {
  const pool = new ConstantPool();
  const at = (opcode: number, index: number) => Buffer.concat([Buffer.from([opcode]), u2(index)]);
  const code = Buffer.concat([
    Buffer.from([op.aload_0]),
    at(op.invokestatic, pool.method(SERVER_RUNNER, 'createServerFromCommandLineArgs', `([Ljava/lang/String;)L${PROXY_SERVER};`)),
    Buffer.from([op.astore_1]),
    at(op.ldc_w, pool.class(PROXY_SERVER)),
    at(op.ldc_w, pool.string('server')),
    at(op.invokevirtual, pool.method('java/lang/Class', 'getDeclaredField', '(Ljava/lang/String;)Ljava/lang/reflect/Field;')),
    Buffer.from([op.dup, op.iconst_1]),
    at(op.invokevirtual, pool.method('java/lang/reflect/Field', 'setAccessible', '(Z)V')),
    Buffer.from([op.aload_1]),
    at(op.invokevirtual, pool.method('java/lang/reflect/Field', 'get', '(Ljava/lang/Object;)Ljava/lang/Object;')),
    at(op.checkcast, pool.class(JETTY_SERVER)),
    at(op.invokevirtual, pool.method(JETTY_SERVER, 'getConnectors', '()[Lorg/eclipse/jetty/server/Connector;')),
    Buffer.from([op.iconst_0, op.aaload]),
    at(op.checkcast, pool.class(JETTY_CONNECTOR)),
    at(op.ldc_w, pool.string(host)),
    at(op.invokevirtual, pool.method(JETTY_CONNECTOR, 'setHost', '(Ljava/lang/String;)V')),
    Buffer.from([op.aload_1]),
    at(op.invokevirtual, pool.method(PROXY_SERVER, 'start', '()V')),
    Buffer.from([op.return]),
  ]);
  // Code attribute: max_stack 3, max_locals 2 (args, proxy), no exception table, no attributes.
  const codeAttribute = Buffer.concat([u2(3), u2(2), u4(code.length), code, u2(0), u2(0)]);
  const main = Buffer.concat([
    u2(0x0009), // public static
    u2(pool.utf8('main')),
    u2(pool.utf8('([Ljava/lang/String;)V')),
    u2(1),
    u2(pool.utf8('Code')),
    u4(codeAttribute.length),
    codeAttribute,
  ]);
  const thisClass = pool.class(LAUNCHER_CLASS);
  const superClass = pool.class('java/lang/Object');
  return Buffer.concat([
    u4(0xcafebabe),
    u2(0), // minor version
    u2(52), // Java 8's class format: every Java DynamoDB Local runs on reads it
    pool.bytes(),
    u2(0x0021), // public, super
    u2(thisClass),
    u2(superClass),
    u2(0), // interfaces
    u2(0), // fields
    u2(1), // methods: main
    main,
    u2(0), // attributes
  ]);
}

/**
 * Writes the launcher into a directory of its own, for java's class path. The JVM loads its main
 * class as it starts, so `remove()` may be called once the engine answers.
 */
export function writeLauncher(host: string): { directory: string; remove(): void } {
  const directory = mkdtempSync(join(tmpdir(), 'entity-record-api-engine-'));
  writeFileSync(join(directory, `${LAUNCHER_CLASS}.class`), launcherClass(host));
  return { directory, remove: () => rmSync(directory, { recursive: true, force: true }) };
}
