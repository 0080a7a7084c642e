import Foundation
import Strata
import Testing

@Suite("SHA-256 matches the FIPS 180-4 test vectors")
struct SHA256Tests {
    @Test("the empty message")
    func empty() {
        #expect(
            SHA256Digest.hash([UInt8]()).hexString == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }

    @Test("\"abc\"")
    func abc() {
        #expect(
            SHA256Digest.hash("abc".utf8).hexString
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("the 448-bit message, whole and fed in pieces")
    func twoBlocks() {
        let message = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        let expected = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        #expect(SHA256Digest.hash(message.utf8).hexString == expected)
        var digest = SHA256Digest()
        for chunk in stride(from: 0, to: message.utf8.count, by: 7) {
            digest.update(Array(message.utf8).dropFirst(chunk).prefix(7))
        }
        #expect(digest.finalize().hexString == expected)
    }

    @Test("one million 'a's")
    func millionA() {
        var digest = SHA256Digest()
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { digest.update(block) }
        #expect(digest.finalize().hexString == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("finalizing does not consume the digest")
    func finalizeIsPure() {
        var digest = SHA256Digest()
        digest.update("ab".utf8)
        _ = digest.finalize()
        digest.update("c".utf8)
        #expect(digest.finalize().hexString == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
