// The JSON of dbsock's agent protocol, for the Java agent (Agent.java):
// objects as LinkedHashMap, arrays as ArrayList, numbers as Long or Double,
// and a message's fields read as the protocol gives them.

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class Json {
    final String s;
    int i;

    Json(String s) {
        this.s = s;
    }

    static Object parse(String s) {
        Json j = new Json(s);
        Object v = j.value();
        j.ws();
        if (j.i != s.length()) throw new IllegalArgumentException("JSON: text after the value at " + j.i);
        return v;
    }

    void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
    }

    char next() {
        ws();
        if (i >= s.length()) throw new IllegalArgumentException("JSON: the line ends inside a value");
        return s.charAt(i);
    }

    Object value() {
        char c = next();
        switch (c) {
            case '{': {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                if (next() == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    if (next() != '"') throw new IllegalArgumentException("JSON: a key is a string, at " + i);
                    String k = string();
                    if (next() != ':') throw new IllegalArgumentException("JSON: ':' expected at " + i);
                    i++;
                    m.put(k, value());
                    char d = next();
                    i++;
                    if (d == '}') return m;
                    if (d != ',') throw new IllegalArgumentException("JSON: ',' or '}' expected at " + (i - 1));
                }
            }
            case '[': {
                i++;
                List<Object> l = new ArrayList<>();
                if (next() == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    char d = next();
                    i++;
                    if (d == ']') return l;
                    if (d != ',') throw new IllegalArgumentException("JSON: ',' or ']' expected at " + (i - 1));
                }
            }
            case '"':
                return string();
            default:
                if (s.startsWith("true", i)) {
                    i += 4;
                    return Boolean.TRUE;
                }
                if (s.startsWith("false", i)) {
                    i += 5;
                    return Boolean.FALSE;
                }
                if (s.startsWith("null", i)) {
                    i += 4;
                    return null;
                }
                int start = i;
                while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
                String n = s.substring(start, i);
                if (n.isEmpty()) throw new IllegalArgumentException("JSON: unexpected '" + c + "' at " + start);
                if (n.indexOf('.') < 0 && n.indexOf('e') < 0 && n.indexOf('E') < 0) return Long.parseLong(n);
                return Double.parseDouble(n);
        }
    }

    String string() {
        i++; // the opening quote
        StringBuilder b = new StringBuilder();
        while (true) {
            if (i >= s.length()) throw new IllegalArgumentException("JSON: a string is not closed");
            char c = s.charAt(i++);
            if (c == '"') return b.toString();
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = s.charAt(i++);
            switch (e) {
                case 'n': b.append('\n'); break;
                case 't': b.append('\t'); break;
                case 'r': b.append('\r'); break;
                case 'b': b.append('\b'); break;
                case 'f': b.append('\f'); break;
                case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                default: b.append(e);
            }
        }
    }

    static void write(Object v, StringBuilder b) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String) {
            String s = (String) v;
            b.append('"');
            for (int k = 0; k < s.length(); k++) {
                char c = s.charAt(k);
                if (c == '"' || c == '\\') b.append('\\').append(c);
                else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
            }
            b.append('"');
        } else if (v instanceof Map) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) b.append(',');
                first = false;
                write(String.valueOf(e.getKey()), b);
                b.append(':');
                write(e.getValue(), b);
            }
            b.append('}');
        } else if (v instanceof long[]) {
            long[] a = (long[]) v;
            b.append('[');
            for (int k = 0; k < a.length; k++) {
                if (k > 0) b.append(',');
                b.append(a[k]);
            }
            b.append(']');
        } else if (v instanceof List) {
            b.append('[');
            boolean first = true;
            for (Object o : (List<?>) v) {
                if (!first) b.append(',');
                first = false;
                write(o, b);
            }
            b.append(']');
        } else {
            b.append(v); // Long, Integer, Boolean
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o, String what) {
        if (!(o instanceof Map)) throw new IllegalArgumentException(what + " is not a JSON object");
        return (Map<String, Object>) o;
    }

    static String str(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v == null ? "" : String.valueOf(v);
    }

    static long num(Map<String, Object> m, String k) {
        Object v = m.get(k);
        if (v == null) return 0;
        if (!(v instanceof Long)) throw new IllegalArgumentException(k + " is " + v + ", not an integer");
        return (Long) v;
    }

    static Map<String, Object> msg(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int k = 0; k < kv.length; k += 2) m.put((String) kv[k], kv[k + 1]);
        return m;
    }
}
