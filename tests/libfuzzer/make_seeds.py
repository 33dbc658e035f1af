#!/usr/bin/env python3
"""Writes the seed corpora of the data-reader fuzz targets (tests/libfuzzer/corpus/{idx,
cifar10,csv,metrics,png,jpeg,model_check,run_agreement,run_log,class_names,image_folder},
checkpoint metadata, and safetensors headers Python refuses): small valid files of each
kind and a few broken ones, so libFuzzer starts past the header checks. Deterministic;
rerun after changing it:
    python3 tests/libfuzzer/make_seeds.py
The JPEG seeds need PIL (Debian's python3-pil) and cjpeg (libjpeg-turbo-progs); without
them they are left as they are."""
import gzip
import os
import shutil
import struct
import subprocess
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, mtime=0)


def idx_seeds():
    # fuzz_idx: first byte even = images, odd = labels; the rest is the file.
    images = struct.pack(">IIII", 0x803, 3, 4, 5) + bytes(range(60))
    labels = struct.pack(">II", 0x801, 5) + bytes([0, 1, 2, 9, 3])
    write("idx", "images_raw", b"\0" + images)
    write("idx", "images_gz", b"\0" + gz(images))
    write("idx", "labels_raw", b"\1" + labels)
    write("idx", "labels_gz", b"\1" + gz(labels))
    write("idx", "images_truncated", b"\0" + images[:40])
    write("idx", "images_gz_truncated", b"\0" + gz(images)[:-6])
    write("idx", "images_trailing", b"\0" + images + b"\0" * 8)
    write("idx", "labels_wrong_magic", b"\1" + struct.pack(">II", 0x803, 1) + b"\0")
    write("idx", "images_huge_claim_gz", b"\0" + gz(struct.pack(">IIII", 0x803, 64, 4096,
                                                                4096) + b"\0" * 4096))
    write("idx", "labels_zero_count", b"\1" + struct.pack(">I", 0x801) + b"\0\0\0\0")


def cifar_seeds():
    def record(label, fill):
        return bytes([label]) + bytes((fill + i) % 256 for i in range(3072))
    write("cifar10", "one_record", record(3, 0))
    write("cifar10", "two_records", record(0, 7) + record(9, 200))
    write("cifar10", "cut_record", record(1, 1)[:2000])
    write("cifar10", "bad_label", record(10, 5))
    write("cifar10", "cifar100_record", bytes([1]) + record(2, 3))
    write("cifar10", "empty", b"")


def csv_seeds():
    # fuzz_csv: an input starting with '@' names the label column on its first line.
    write("csv", "label_first", b"label,a,b,c\n0,1.5,2,-3\n1,0,0,1e3\n2,4,5,6\n")
    write("csv", "label_named", b"@y\nx1,x2,y\n0.5,1,3\n2,-1,0\n")
    write("csv", "no_label_column", b"a,b\n1,2\n3,4\n")
    write("csv", "crlf_blank_line", b"label,f\r\n1,2\r\n\r\n0,0.25\r\n")
    write("csv", "bad_cell", b"label,f\n1,abc\n")
    write("csv", "ragged_row", b"label,f,g\n1,2\n")
    write("csv", "label_range", b"label,f\n256,1\n-1,2\n")
    write("csv", "nan_inf", b"label,f\n1,nan\n2,inf\n")
    write("csv", "missing_named_label", b"@target\nlabel,f\n1,2\n")
    write("csv", "header_only", b"label,f\n")
    write("csv", "no_header", b"0,1,2\n0,1,2\n1,3,4\n")
    write("csv", "numbered_header", b"@2\n0,1,2\n1,-3.5e2,4\n0,0x1p3,6\n")
    write("csv", "mac_line_endings", b"label,f\r1,2\r0,3\r")
    write("csv", "lone_cr_among_crlf", b"label,f\r\n1,2\r\n0,3\r1,1\r\n")
    write("csv", "underflow", b"label,f,g\n0,1e-40,-1e-50\n1e-50,1e-38,2\n")
    # A NUL once ended the file for the line finder: the rows after it were dropped, rc 0.
    write("csv", "nul_in_row", b"label,f\n1,2\n0,\x003\n1,4\n0,5\n")
    write("csv", "nul_starts_row", b"label,f\n1,2\n\x000,3\n1,4\n")


def metrics_seeds():
    # fuzz_metrics: a --logdir's metrics.jsonl as trainer plot reads it.
    step = b'{"kind":"step","step":16,"epoch":1,"loss":1.72,"accuracy":0.47,"lr":0.001}\n'
    epoch = (b'{"kind":"epoch","step":16,"epoch":1,"loss":1.72,"accuracy":0.47,'
             b'"test_loss":1.13,"test_accuracy":0.61,"lr":0.001,"seconds":0.08}\n')
    val = (b'{"kind":"epoch","step":32,"epoch":2,"loss":0.93,"accuracy":0.65,'
           b'"val_loss":0.9,"val_accuracy":0.66}\n')
    write("metrics", "two_epochs", step + epoch + step.replace(b"16", b"32") + val)
    write("metrics", "unfinished_last_line", step + epoch + b'{"kind":"st')
    write("metrics", "two_rows_one_line", step.rstrip(b"\n") + epoch)
    write("metrics", "no_loss", b'{"kind":"step","step":1}\n')
    write("metrics", "huge_numbers",
          b'{"kind":"step","step":1e999,"loss":1}\n{"kind":"step","step":2,"loss":1e999}\n')
    write("metrics", "not_json", b"step 16 loss 1.7\n")
    write("metrics", "empty", b"")
    write("metrics", "nul_in_row", step + epoch.replace(b'"loss"', b'"lo\x00ss"'))

def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(width, height, depth, color, rows, palette=None, trns=None, interlace=0):
    out = b"\x89PNG\r\n\x1a\n"
    out += png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color, 0, 0,
                                          interlace))
    if palette is not None:
        out += png_chunk(b"PLTE", palette)
    if trns is not None:
        out += png_chunk(b"tRNS", trns)
    out += png_chunk(b"IDAT", zlib.compress(b"".join(b"\0" + r for r in rows)))
    return out + png_chunk(b"IEND", b"")


def png_seeds():
    w, h = 4, 3
    gray8 = [bytes((x * 60 + y * 20) % 256 for x in range(w)) for y in range(h)]
    write("png", "gray8", png(w, h, 8, 0, gray8))
    write("png", "gray1", png(8, 2, 1, 0, [b"\xa5", b"\x5a"]))
    write("png", "gray16", png(2, 2, 16, 0, [b"\x12\x34\xff\xff", b"\0\0\x80\x00"]))
    write("png", "gray_alpha8", png(2, 2, 8, 4, [b"\x10\xff\x80\x00", b"\xff\x80\0\0"]))
    write("png", "rgb8", png(2, 2, 8, 2, [bytes(range(6)), bytes(range(100, 106))]))
    write("png", "rgba16", png(1, 2, 16, 6, [bytes(range(8)), bytes(range(8, 16))]))
    write("png", "palette4_trns", png(4, 2, 4, 3, [b"\x01\x20", b"\x12\x00"],
                                      palette=bytes(range(9)), trns=b"\x00\x80"))
    # Index 5 of a 3-entry palette, as a row's last pixel (libpng's own check skips it).
    write("png", "palette8_index_past", png(3, 2, 8, 3, [b"\x00\x01\x05", b"\x02\x01\x00"],
                                            palette=bytes(range(9))))
    write("png", "gray8_interlaced", png(w, h, 8, 0, gray8, interlace=1))
    whole = png(w, h, 8, 0, gray8)
    write("png", "truncated", whole[: len(whole) - 20])
    bad_crc = bytearray(whole)
    bad_crc[29] ^= 0xff  # inside IHDR's CRC
    write("png", "bad_crc", bytes(bad_crc))
    write("png", "short_idat", png(w, h, 8, 0, gray8[:1]))
    write("png", "not_png", b"GIF89a\x01\x00\x01\x00")


def model_seeds():
    write("model_check", "mlp", b"""# a small MLP
input     shape=784 dtype=f32
dense     units=16 act=relu
dense     units=10
loss      softmax_cross_entropy
optimizer adam lr=0.001
train     batch=8 epochs=1 seed=1
""")
    models = os.path.join(os.path.dirname(ROOT), "..", "..", "models")
    for name in sorted(os.listdir(models)):
        if name.endswith(".model"):
            with open(os.path.join(models, name), "rb") as f:
                write("model_check", name[: -len(".model")], f.read())
    write("model_check", "unknown_key", b"input shape=1x28x28\ndense unitz=10\nloss "
                                        b"softmax_cross_entropy\n")
    write("model_check", "no_loss", b"input shape=10\ndense units=3\n")
    write("model_check", "bad_shape", b"input shape=0x28x-1\nflatten\ndense units=10\n"
                                      b"loss softmax_cross_entropy\n")
    write("model_check", "duplicate_key", b"input shape=10 shape=10\n")
    write("model_check", "transforms", b"input shape=3x8x8\nconv2d filters=4 kernel=3\n"
                                       b"flatten\ndense units=10\nloss softmax_cross_entropy\n"
                                       b"normalize mean=0.49,0.48,0.45 std=0.25,0.24,0.26\n"
                                       b"augment crop=2 flip=true\n")
    write("model_check", "data_spec", b"input shape=4\ndense units=3\nloss "
                                      b"softmax_cross_entropy\n"
                                      b"data spec=csv:~/t.csv,label=kind val_split=0.25\n")


def safetensors_seeds():
    """What Python's safetensors refuses and cJSON once took (the target's other seeds are
    files kept as they are)."""
    def file(header, data=b"\0" * 4):
        return struct.pack("<Q", len(header)) + header + data
    tensor = b'"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    write("safetensors", "trailing_bytes", file(b"{" + tensor + b"}xyz"))
    write("safetensors", "trailing_nul", file(b"{" + tensor + b"}\0\0\0"))
    write("safetensors", "padded_with_whitespace", file(b"{" + tensor + b"} \t\r\n   "))
    write("safetensors", "nul_between_tokens", file(b"{\0" + tensor + b"}"))
    write("safetensors", "nul_in_name", file(b"{" + tensor.replace(b'"a"', b'"a\0b"') + b"}"))
    write("safetensors", "escaped_nul_name",
          file(b"{" + tensor.replace(b'"a"', b'"a\\u0000b"') + b"}"))
    write("safetensors", "latin1_metadata",
          file(b'{"__metadata__":{"model_file":"mod\xe8le.model"},' + tensor + b"}"))
    write("safetensors", "control_byte", file(b"{\x01" + tensor + b"}"))
    write("safetensors", "float_shape", file(b"{" + tensor.replace(b"[1]", b"[1.0]") + b"}"))
    write("safetensors", "exponent_offset",
          file(b"{" + tensor.replace(b"[0,4]", b"[0,4e0]") + b"}"))
    write("safetensors", "unknown_field_float",
          file(b"{" + tensor.replace(b"]}", b'],"x":1.5}') + b"}"))


def checkpoint_metadata_seeds():
    """Metadata eval and predict read (normalization, class names, the held-out split, the
    resize) in a file of no tensors;
    the checkpoint target's other seeds come from real checkpoints."""
    def safetensors(metadata):
        import json
        header = json.dumps({"__metadata__": metadata}).encode()
        return struct.pack("<Q", len(header)) + header
    write("checkpoint", "inputs_metadata", safetensors({
        "normalize_mean": "0.4914,0.4822,0.4465", "normalize_std": "0.247,0.2435,0.2616",
        "class_names": '["airplane","automobile","bird"]'}))
    write("checkpoint", "inputs_metadata_bad", safetensors({
        "normalize_mean": "0.5,x", "normalize_std": "0", "class_names": '["a",3]'}))
    write("checkpoint", "held_out_split", safetensors({
        "val_split": "0.10000000000000001", "val_split_seed": "3", "train_limit": "500",
        "val_split_of": "500"}))
    write("checkpoint", "resize_limit_order", safetensors({
        "resize": "28x32", "val_split": "0.25", "val_split_seed": "1", "train_limit": "200",
        "train_limit_order": "first", "val_split_of": "200"}))
    write("checkpoint", "resize_limit_order_bad", safetensors({
        "resize": "28x", "val_split": "0.25", "val_split_seed": "1", "train_limit": "200",
        "train_limit_order": "last"}))
    # A resume's place whose test_accuracy has text after its number: refused, not read as 0.9.
    write("checkpoint", "place_accuracy_bad", safetensors({
        "epoch": "1", "step_in_epoch": "0", "optimizer_steps": "3", "seed": "1", "batch": "2",
        "test_accuracy": "0.9x"}))
    # Its tensors' bytes cut short: the header-only read refuses it as the whole read does.
    tensors = (b'{"__metadata__":{"resize":"28x28"},"a":{"dtype":"F32","shape":[1],'
               b'"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}')
    write("checkpoint", "tensors_cut_short",
          struct.pack("<Q", len(tensors)) + tensors + b"\0" * 6)


def run_record(fields, version=1, count=None):
    """core/run_record.h's bytes: "TRRA", version, u16 count, then per field u8 name
    length, name, u16 value length, value."""
    out = b"TRRA" + bytes([version]) + struct.pack("<H", len(fields) if count is None else count)
    for name, value in fields:
        out += bytes([len(name)]) + name + struct.pack("<H", len(value)) + value
    return out


def run_agreement_seeds():
    run = [(b"run record", b"version 1 (trainer 0.1.0)"), (b"parameter tensors", b"4"),
           (b"parameter 1", b"dense1.weight 32x784"), (b"parameter 2", b"dense1.bias 32"),
           (b"parameter 3", b"dense2.weight 10x32"), (b"parameter 4", b"dense2.bias 10"),
           (b"optimizer", b"sgd"), (b"lr", b"0.05"), (b"batch", b"16"), (b"epochs", b"1"),
           (b"seed", b"3"), (b"data", b"fashion-mnist"), (b"train samples", b"64"),
           (b"val samples", b"none"), (b"test samples", b"16"), (b"precision", b"fp32"),
           (b"model text hash", b"8c2d0f6b7a915e43")]
    whole = run_record(run)
    write("run_agreement", "run", whole)
    write("run_agreement", "empty_record", run_record([]))
    write("run_agreement", "truncated", whole[:len(whole) // 2])
    write("run_agreement", "trailing", whole + b"\0\0")
    write("run_agreement", "version_2", run_record(run[:3], version=2))
    write("run_agreement", "count_past_fields", run_record(run[:2], count=5))
    write("run_agreement", "count_past_max", run_record([], count=0xffff))
    write("run_agreement", "empty_name", run_record([(b"", b"x")]))
    write("run_agreement", "nul_in_value", run_record([(b"data", b"a\0b")]))
    write("run_agreement", "escape_in_value", run_record([(b"data", b"idx:/d\x1b[31m\xff")]))
    write("run_agreement", "value_too_long", run_record([(b"data", b"x" * 600)]))
    # Two records, split at the first byte's share: ranks that disagree on the batch.
    other = run_record(run[:8] + [(b"batch", b"32")] + run[9:])
    write("run_agreement", "two_records", bytes([round(255 * len(whole) / (len(whole) +
                                                                         len(other) - 1))])
          + whole + other)
    write("run_agreement", "not_a_record", b"GIF89a")


def jpeg_seeds():
    # fuzz_jpeg: gray, colour (4:2:0 and 4:4:4), progressive, Adobe CMYK, arithmetic-coded,
    # with restart markers; a 12-bit header and a cut file, which must be refused.
    try:
        from PIL import Image
    except ImportError:
        print("make_seeds: no PIL (python3-pil): the jpeg seeds are left as they are")
        return
    folder = os.path.join(ROOT, "jpeg")
    os.makedirs(folder, exist_ok=True)
    path = lambda name: os.path.join(folder, name)
    g = Image.new("L", (16, 12))
    for y in range(12):
        for x in range(16):
            g.putpixel((x, y), (x * 13 + y * 7) % 256)
    rgb = Image.merge("RGB", (g, g.rotate(90), g.transpose(Image.FLIP_LEFT_RIGHT)))
    g.save(path("gray.jpg"), quality=90)
    rgb.save(path("rgb420.jpg"), quality=75)
    rgb.save(path("rgb444.jpg"), quality=95, subsampling=0)
    rgb.save(path("progressive.jpg"), quality=80, progressive=True)
    rgb.convert("CMYK").save(path("cmyk_adobe.jpg"), quality=90)
    data = open(path("gray.jpg"), "rb").read()
    sof = data.index(b"\xff\xc0")
    write("jpeg", "twelve_bit.jpg", data[:sof + 4] + bytes([12]) + data[sof + 5:])
    write("jpeg", "cut.jpg", open(path("rgb420.jpg"), "rb").read()[:200])
    if shutil.which("cjpeg"):
        ppm = b"P6\n16 12\n255\n" + rgb.tobytes()
        for name, flags in (("arithmetic.jpg", ["-arithmetic"]), ("restart.jpg", ["-restart", "1"])):
            out = subprocess.run(["cjpeg"] + flags, input=ppm, capture_output=True, check=True)
            write("jpeg", name, out.stdout)


def run_log_seeds():
    # fuzz_run_log: the first byte is the run (bit 0 evaluate_first, the rest the resumed
    # step, 127 a fresh run), the rest the metrics.jsonl it finds in --logdir.
    def run(step, evaluate_first=0):
        return bytes([(127 if step < 0 else step) << 1 | evaluate_first])
    step = b'{"kind":"step","step":16,"epoch":1,"loss":1.72,"accuracy":0.47,"lr":0.001}\n'
    epoch = (b'{"kind":"epoch","step":16,"epoch":1,"loss":1.72,"accuracy":0.47,'
             b'"test_loss":1.13,"test_accuracy":0.61,"lr":0.001,"seconds":0.08}\n')
    test = b'{"kind":"test","step":32,"epoch":2,"test_loss":1.85,"test_accuracy":0.45}\n'
    later = step.replace(b"16", b"32") + epoch.replace(b"16", b"32")
    write("run_log", "fresh_empty", run(-1))
    write("run_log", "fresh_blank_lines", run(-1) + b"\n \r\n\t\n")
    write("run_log", "fresh_refused", run(-1) + step)
    write("run_log", "resume_keeps_all", run(40) + step + epoch + later)
    write("run_log", "resume_drops_later", run(16) + step + epoch + later + test)
    write("run_log", "resume_evaluate_first", run(16, 1) + step + epoch + later)
    write("run_log", "resume_test_redone", run(32) + step + epoch + later + test)
    write("run_log", "resume_unfinished_kept", run(20) + step + epoch.rstrip(b"\n"))
    write("run_log", "resume_cut_tail", run(16) + step + epoch + b'{"kind":"ep')
    write("run_log", "resume_invalid_row", run(16) + step + b"step 16 loss 1.7\n" + epoch)


def class_names_seeds():
    # fuzz_class_names: the first byte is the model's class count less one, the rest the
    # --classes file, one name per line.
    names = b"T-shirt/top\nTrouser\nPullover\nDress\nCoat\nSandal\nShirt\nSneaker\nBag\n"
    write("class_names", "ten_names", b"\x09" + names + b"Ankle boot\n")
    write("class_names", "crlf_trailing_blanks", b"\x02" + b"cat \r\ndog\t\r\nbird\r\n\r\n")
    write("class_names", "no_final_newline", b"\x01" + b"yes\nno")
    write("class_names", "blank_line_inside", b"\x02" + b"a\n\nb\nc\n")
    write("class_names", "too_few", b"\x09" + names)
    write("class_names", "nul_byte", b"\x01" + b"a\x00\nb\n")
    write("class_names", "utf8_names", b"\x01" + "chat\nchien\u00e9\n".encode())


def image_folder_seeds():
    # fuzz_image_folder: one file a line, its first byte the content ("0" a 2x2 gray PNG, "1"
    # a 2x2 colour PNG, "2" a 3x2 gray PNG, "3" no image), the rest its path under DIR.
    def tree(*lines):
        return b"\n".join(lines) + b"\n"
    write("image_folder", "train_test", tree(b"0train/cat/a.png", b"1train/cat/b.PNG",
                                             b"0train/dog/c.png", b"0test/cat/d.png",
                                             b"1test/dog/e.png"))
    write("image_folder", "classes_only", tree(b"0cat/a.png", b"2cat/b.png", b"0dog/c.jpg"))
    write("image_folder", "test_class_not_in_train", tree(b"0train/cat/a.png",
                                                          b"0test/bird/b.png"))
    write("image_folder", "bad_image_skipped", tree(b"0train/cat/a.png", b"3train/cat/b.png",
                                                    b"3test/cat/c.png", b"0test/cat/d.png"))
    write("image_folder", "odd_names", tree(b"0train/\x1b[31mred/a.png",
                                            b"0train/.hidden/b.png", b"0train/caf\xc3\xa9/c.png",
                                            b"0train/\xff/d.png",
                                            b"0train/" + b"n" * 70 + b"/e.png"))
    write("image_folder", "no_images", tree(b"3train/cat/a.txt", b"0train/dog/deep/b.png"))
    write("image_folder", "empty", b"")


if __name__ == "__main__":
    idx_seeds()
    cifar_seeds()
    csv_seeds()
    metrics_seeds()
    png_seeds()
    jpeg_seeds()
    model_seeds()
    checkpoint_metadata_seeds()
    run_agreement_seeds()
    safetensors_seeds()
    run_log_seeds()
    class_names_seeds()
    image_folder_seeds()
